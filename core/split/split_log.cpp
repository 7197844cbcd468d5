// The op log of a split system (op_log.hpp, docs/scale-out.md "The op log of a split run").
//
// One process logs records in the order its events run. That order is the engine's: at each instant, the pending
// event with the lowest order key runs next, and events an event schedules for the same instant stay on its rank (a
// cut link has a positive latency). So the instant's events, over the whole system, run as a merge of each rank's
// own sequence that always takes the rank whose next event has the lowest key; and such a merge is the same as
// sorting each rank's events by the largest key its rank had run so far (a rank's next event, when lower than one it
// ran, is run at once after it), then by their order on their rank. A record is placed there: the furthest key of
// the events its rank ran, when it was made. The last tie of that key, between events one node scheduled for one
// instant, is the node's count of events it scheduled: the order the node scheduled them, on every rank alike.
//
// A run of the bench ends at a place every rank learns: the end of its time, or the stopping event's place. A rank
// may have run past a stop (its window ran on): what it logged there belongs after what the bench does next, so it
// waits for the next epoch. The bench's own records (host writes, made alike on every rank) sit at the front of
// the epoch they are made in, and every rank keeps its own.
#include <algorithm>
#include <limits>

#include "component/simulation.hpp"
#include "plugin/registry.hpp"
#include "split/split_executor.hpp"

namespace kbsim::core {

const OpPayloadType& SplitExecutor::payload_type(std::string_view name, const OpRecord& whose) {
  auto& found = payloads_;
  if (auto it = found.find(name); it != found.end()) return *it->second;
  for (const Extension* e : registry(sim_).extensions_of(OpPayloadType::kPayloadKind))
    if (e->name == name && e->data)
      return *found.emplace(name, static_cast<const OpPayloadType*>(e->data.get())).first->second;
  throw SimError(std::string(whose.component_id) + "'s record '" + whose.name +
                 "' carries an op-log payload of type '" + std::string(name) +
                 "', whose loader no loaded plugin registers (add_payload in kbsim/plugin.hpp)");
}

void SplitExecutor::save_record(ByteWriter& w, const OpRecord& r) {
  w.put(r.t_start);
  w.put(r.t_end);
  w.put(r.component);
  w.put_string(r.kind);
  w.put_string(r.name);
  w.put(static_cast<std::uint64_t>(r.params.size()));
  for (const OpParam& p : r.params) {
    w.put_string(p.key);
    w.put(static_cast<std::uint8_t>(p.value.index()));
    if (const auto* i = std::get_if<std::int64_t>(&p.value)) w.put(*i);
    if (const auto* d = std::get_if<double>(&p.value)) w.put(*d);
    if (const auto* s = std::get_if<std::string>(&p.value)) w.put_string(*s);
  }
  w.put_vector(std::span<const std::uint64_t>(r.dependency_ids));
  w.put(r.flow);
  w.put(r.flow_end);
  w.put(r.data != nullptr);
  if (!r.data) return;
  const std::string_view name = r.data->payload_name();
  if (name.empty())
    throw SimError(std::string(r.component_id) + "'s record '" + r.name +
                   "' carries a payload that cannot cross between the ranks of a split run (its type has no "
                   "payload_name and save; see add_payload in kbsim/plugin.hpp)");
  payload_type(name, r);  // (known here, or every rank would fail to load it)
  w.put_string(name);
  std::string bytes;
  ByteWriter pw(bytes);
  r.data->save(pw);
  w.put_string(bytes);
}

OpRecord SplitExecutor::load_record(ByteReader& r, unsigned rank) {
  OpRecord rec;
  rec.t_start = r.get<Tick>();
  rec.t_end = r.get<Tick>();
  rec.component = r.get<NodeIndex>();
  if (rec.component >= sim_.elaboration()->nodes.size())
    throw SimError("rank " + std::to_string(rank) + " logged a record of no node");
  rec.component_id = sim_.elaboration()->ids[rec.component];
  rec.kind = oplog_->intern(r.get_string());
  rec.name = r.get_string();
  for (std::size_t k = r.get_count(); k > 0; --k) {
    std::string key = r.get_string();
    switch (r.get<std::uint8_t>()) {
      case 0: rec.params.push_back({std::move(key), r.get<std::int64_t>()}); break;
      case 1: rec.params.push_back({std::move(key), r.get<double>()}); break;
      case 2: rec.params.push_back({std::move(key), r.get_string()}); break;
      default: throw SimError("rank " + std::to_string(rank) + " logged a parameter of no known type");
    }
  }
  rec.dependency_ids = r.get_vector<std::uint64_t>();
  rec.flow = r.get<std::uint64_t>();
  rec.flow_end = r.get<bool>();
  if (r.get<bool>()) {
    const std::string name = r.get_string();
    const OpPayloadType& type = payload_type(name, rec);
    ByteReader pr(r.get_bytes());
    try {
      rec.data = type.load(pr);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw PluginError("the op-log payload type '" + name + "' failed to load a record of rank " +
                        std::to_string(rank) + ": " + e.what());
    }
    if (!pr.done()) throw SimError("the op-log payload type '" + name + "' reads fewer bytes than it saves");
  }
  return rec;
}

OpLog::Settled SplitExecutor::send_records(ByteWriter& w, const Place& last) {
  OpLog::Settled settled = oplog_->settle(last, epoch_ + 1);
  w.put(settled.open);
  w.put(settled.watermark);
  std::string block;  // (one piece, so that the rank that made them can pass over its own)
  ByteWriter bw(block);
  bw.put(static_cast<std::uint64_t>(settled.records.size()));
  for (const OpLog::Held& h : settled.records) {
    put_place(bw, h.place);
    save_record(bw, h.record);
  }
  w.put_string(block);
  // The next epoch starts afresh (an older epoch's place comes before any of it); on a rank that ran past a stop,
  // from where it is.
  ++epoch_;
  if (pos_ > last) pos_.epoch = epoch_;
  return settled;
}

bool SplitExecutor::set_op_log(OpLog* log) {
  oplog_ = log;
  placing_ = log != nullptr;
  if (placing_) log->hold([this] { return place(); });
  return placing_;
}

void SplitExecutor::place_event(std::uint32_t priority) {
  const Engine& eng = engine_;
  const std::uint32_t slot = eng.running_slot();
  const std::uint64_t tie = slot < ties_.size() ? ties_[slot] : 0;
  const Place here{epoch_, 1, eng.now(), priority, eng.running_root(), eng.running_lane(), tie};
  if (pos_ < here) pos_ = here;
}

Place SplitExecutor::place() const { return engine_.dispatching() ? pos_ : Place{epoch_, 0, 0, 0, 0, 0, 0}; }

Place SplitExecutor::bench_end() const {
  constexpr auto k32 = std::numeric_limits<std::uint32_t>::max();
  constexpr auto k64 = std::numeric_limits<std::uint64_t>::max();
  return {epoch_, 0, kNever, k32, k32, k64, k64};
}

Place SplitExecutor::run_end(Tick t) const {
  Place p = bench_end();
  p.stage = 1;
  p.time = t;
  return p;
}

void SplitExecutor::merge_records(OpLog::Settled mine, std::vector<ByteReader>& readers) {
  const unsigned me = split_.rank;
  struct Item {
    Place place;
    unsigned rank;
    OpRecord record;
  };
  std::vector<Item> all;
  for (OpLog::Held& h : mine.records) all.push_back({h.place, me, std::move(h.record)});
  std::uint64_t open = 0;
  Tick watermark = kNever;
  for (unsigned rank = 0; rank < readers.size(); ++rank) {
    ByteReader& in = readers[rank];
    open += in.get<std::uint64_t>();
    watermark = std::min(watermark, in.get<Tick>());
    ByteReader r(in.get_bytes());
    if (rank == me) continue;  // (this rank's own are in `mine`, as they are)
    for (std::size_t n = r.get_count(); n > 0; --n) {
      const Place place = get_place(r);
      all.push_back({place, rank, load_record(r, rank)});
    }
  }
  // Equal places are one rank's: a handler's records, in the order it made them.
  std::stable_sort(all.begin(), all.end(), [](const Item& a, const Item& b) {
    return a.place < b.place || (a.place == b.place && a.rank < b.rank);
  });
  for (Item& it : all) oplog_->emit(std::move(it.record));
  oplog_->set_merged_open(open, watermark);
}

}  // namespace kbsim::core
