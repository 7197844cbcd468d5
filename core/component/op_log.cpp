#include "component/op_log.hpp"

#include <algorithm>
#include <iterator>

#include "kbsim/errors.hpp"

namespace kbsim::core {

void put_place(ByteWriter& w, const Place& p) {
  w.put(p.epoch);
  w.put(p.stage);
  w.put(p.time);
  w.put(p.priority);
  w.put(p.root);
  w.put(p.lane);
  w.put(p.tie);
}

Place get_place(ByteReader& r) {
  Place p;
  p.epoch = r.get<std::uint32_t>();
  p.stage = r.get<std::uint8_t>();
  p.time = r.get<Tick>();
  p.priority = r.get<std::uint32_t>();
  p.root = r.get<std::uint32_t>();
  p.lane = r.get<std::uint64_t>();
  p.tie = r.get<std::uint64_t>();
  return p;
}

void OpLog::start(NodeIndex node, std::string_view id, const Message& msg, Tick now) {
  if (pending_.count({&msg, node})) return;  // delivered again before it left: the first delivery counts
  OpRecord r;
  r.component = node;  // describe_op may ask which node services it
  r.component_id = id;
  if (!msg.describe_op(r)) return;  // captured now: the message may change before its record ends
  r.t_start = now;
  Open o{std::move(r), {}};
  if (held()) o.starts.push_back({where_(), now});
  pending_.emplace(Key{&msg, node}, std::move(o));
}

void OpLog::restart(NodeIndex node, const Message& msg, Tick now) {
  auto it = pending_.find({&msg, node});
  if (it == pending_.end()) return;
  it->second.record.t_start = now;
  if (held()) it->second.starts.push_back({where_(), now});
}

void OpLog::end(NodeIndex node, const Message& msg, Tick at) {
  auto it = pending_.find({&msg, node});
  if (it == pending_.end()) return;
  Open o = std::move(it->second);
  pending_.erase(it);
  o.record.t_end = at;
  if (!held()) return emit(std::move(o.record));
  const Place here = where_();
  if (here.stage == 0)  // (only the component's part ends it: no other part could place it alike)
    throw SimError(std::string(o.record.component_id) + " ended its data operation '" + o.record.name +
                   "' outside any event (in its setup, its finish or a call of the bench): a run in parts over several "
                   "processes cannot place that in its op log (docs/scale-out.md)");
  holding_.push_back({here, std::move(o.starts), std::move(o.record)});
}

void OpLog::record(OpRecord r) {
  if (!held()) return emit(std::move(r));
  const Place here = where_();
  if (here.stage == 0) return emit(std::move(r));  // the bench's, alike in every part: after all that is merged
  const Tick t = r.t_start;
  holding_.push_back({here, {{here, t}}, std::move(r)});
}

void OpLog::emit(OpRecord r) {
  r.seq = seq_++;
  for (const Sink& s : sinks_) s(r);
  if (keep_) records_.push_back(std::move(r));
}

OpLog::Settled OpLog::settle(const Place& last, std::uint32_t next_epoch) {
  // One process would have made the records placed up to `last` by now, and no others; those it had started
  // and not ended yet are open (in this part, or ended here already by a part that ran past the stop).
  Settled out;
  auto open_at_end = [&](std::vector<Start>& starts) {
    // The latest (re)start up to `last` is where one process has it; later ones belong to the next epoch.
    auto first_later = std::find_if(starts.begin(), starts.end(), [&](const Start& s) { return s.place > last; });
    if (first_later != starts.begin()) {
      ++out.open;
      out.watermark = std::min(out.watermark, std::prev(first_later)->t);
      first_later = starts.erase(starts.begin(), std::prev(first_later)) + 1;
    }
    for (; first_later != starts.end(); ++first_later) first_later->place.epoch = next_epoch;
  };
  for (auto& [key, o] : pending_) open_at_end(o.starts);
  std::vector<Held> later;
  for (Held& h : holding_) {
    if (h.place <= last) {
      out.records.push_back(std::move(h));
      continue;
    }
    open_at_end(h.starts);
    h.place.epoch = next_epoch;
    later.push_back(std::move(h));
  }
  holding_ = std::move(later);
  return out;
}

std::vector<const OpRecord*> OpLog::by_start() const {
  std::vector<const OpRecord*> out;
  out.reserve(records_.size());
  for (const OpRecord& r : records_) out.push_back(&r);
  std::stable_sort(out.begin(), out.end(),
                   [](const OpRecord* a, const OpRecord* b) { return a->t_start < b->t_start; });
  return out;
}

Tick OpLog::watermark() const noexcept {
  if (held()) return merged_watermark_;
  Tick w = kNever;
  for (const auto& [key, o] : pending_) w = std::min(w, o.record.t_start);
  return w;
}

}  // namespace kbsim::core
