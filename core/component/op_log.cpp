#include "component/op_log.hpp"

#include <algorithm>

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
  pending_.emplace(Key{&msg, node}, Open{std::move(r), held_ ? where_() : Place{}});
}

void OpLog::restart(NodeIndex node, const Message& msg, Tick now) {
  if (auto it = pending_.find({&msg, node}); it != pending_.end()) {
    it->second.record.t_start = now;
    if (held_) it->second.start = where_();
  }
}

void OpLog::end(NodeIndex node, const Message& msg, Tick at) {
  auto it = pending_.find({&msg, node});
  if (it == pending_.end()) return;
  Open o = std::move(it->second);
  pending_.erase(it);
  o.record.t_end = at;
  if (held_)
    hold_record(std::move(o.record), o.start);
  else
    emit(std::move(o.record));
}

void OpLog::record(OpRecord r) {
  if (!held_) return emit(std::move(r));
  hold_record(std::move(r), where_());
}

void OpLog::hold_record(OpRecord r, const Place& start) { holding_.push_back({where_(), start, std::move(r)}); }

void OpLog::emit(OpRecord r) {
  r.seq = seq_++;
  for (const Sink& s : sinks_) s(r);
  if (keep_) records_.push_back(std::move(r));
}

OpLog::Settled OpLog::settle(const Place& last, std::uint32_t next_epoch, bool drop) {
  // One process would have made the records placed up to `last` by now, and no others; those it had started
  // and not ended yet are open (on this rank, or ended here already by a rank that ran past the stop).
  Settled out;
  auto open_at_end = [&](const Place& start, Tick t_start) {
    if (start > last) return;
    ++out.open;
    out.watermark = std::min(out.watermark, t_start);
  };
  for (const auto& [key, o] : pending_) open_at_end(o.start, o.record.t_start);
  std::vector<Held> later;
  for (Held& h : holding_) {
    if (h.place <= last) {
      out.records.push_back(std::move(h));
      continue;
    }
    open_at_end(h.start, h.record.t_start);
    if (drop) continue;
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
  if (held_) return merged_watermark_;
  Tick w = kNever;
  for (const auto& [key, o] : pending_) w = std::min(w, o.record.t_start);
  return w;
}

}  // namespace kbsim::core
