// What crosses a cut link of a split system (split_executor.hpp): each as one record in the outbox of the receiving
// rank, exchanged at the window's end, and scheduled there with the order its sender gave it.
#include "component/crash.hpp"
#include "component/simulation.hpp"
#include "kbsim/text.hpp"
#include "split/said.hpp"
#include "split/split_executor.hpp"

namespace kbsim::core {

namespace {
// A whole message, a train of flits (all of one message, arriving back to back, as a receiver of flits takes a
// message sent to it whole), or one flit a forwarder passed on.
enum class Record : std::uint8_t { kWhole, kTrain, kFlit };
}  // namespace

ByteWriter SplitExecutor::remote_record(const Link& link, Tick at, std::uint8_t kind) {
  // Arrival time and order key (the one a local event of that arrival would get), the link, the kind.
  // The windows rely on it: nothing crossing arrives sooner than the link's latency plus its sender's promise.
  if (const Tick now = engine_.now(); at < now + link_lookahead(*sim_.elaboration(), link)) [[unlikely]]
    broken_promise(link, at - now);
  const Order order = order_for(sim_, at, link.src);
  outbox_next_ = std::min(outbox_next_, at);
  std::string& box = outbox_[split_.partition->rank_of[link.dst]];
  if (box.empty()) box.push_back(said::kFine);
  ByteWriter w(box);
  w.put(at);
  w.put(order.root);
  w.put(order.lane);
  w.put(++scheduled_[link.src]);  // the last tie of its order (split_log.cpp; also before an op log is set)
  w.put(static_cast<std::uint32_t>(&link - sim_.elaboration()->links.data()));
  w.put(kind);
  return w;
}

void SplitExecutor::broken_promise(const Link& link, Tick after) const {
  const Elaboration& el = *sim_.elaboration();
  const Elaboration::Node& n = el.nodes[link.src];
  fail(sim_, link.src,
       "sends a message to " + el.nodes[link.dst].id + ", on another rank of this split run, arriving " +
           format_ns(ticks_to_ns(after)) + " ns after it acted; but its type '" + n.type->info.type + "' (" +
           crash::library_of(sim_, link.src) + ") promises (parameter '" + n.type->info.send_delay_param +
           "' = " + format_ns(ticks_to_ns(n.send_delay)) +
           " ns) to send nothing sooner than that after it acts, so over this " + format_ns(ticks_to_ns(link.latency)) +
           " ns link it must arrive at least " + format_ns(ticks_to_ns(link_lookahead(el, link))) +
           " ns later: the split run's windows rely on the promise (docs/scale-out.md, \"Lookahead\")");
}

void SplitExecutor::encode_crossing(const Message& msg, ByteWriter& w) {
  // Whose object it is: a visitor (it came from another rank) carries its home's tag on, home or elsewhere; one
  // that will come back (a request, or its answer on its way home through other ranks) is kept here under a tag of
  // its own until it does; anything else goes untagged.
  std::uint32_t home = kNoHome;
  std::uint64_t tag = 0;
  if (auto it = visitors_.find(&msg); it != visitors_.end()) {
    home = it->second.home;
    tag = it->second.tag;
    visitors_.erase(it);
  } else if (msg.returns()) {
    home = split_.rank;
    tag = next_tag_++;
    away_.emplace(tag, Ref<Message>(const_cast<Message*>(&msg)));
  }
  w.put(home);
  if (home != kNoHome) w.put(tag);
  encode_message(registry(sim_), msg, w);
}

Ref<Message> SplitExecutor::decode_crossing(ByteReader& r) {
  const auto home = r.get<std::uint32_t>();
  if (home == kNoHome) return decode_message(registry(sim_), r, &routes_);
  const auto tag = r.get<std::uint64_t>();
  if (home == split_.rank) {  // an answer: the request that left, with what the other ranks made of it
    auto it = away_.find(tag);
    if (it == away_.end())
      throw SimError("an answer from another rank names request " + std::to_string(tag) + ", which did not leave here");
    Ref<Message> msg = std::move(it->second);
    away_.erase(it);
    decode_message_into(r, *msg, &routes_);
    return msg;
  }
  Ref<Message> msg = decode_message(registry(sim_), r, &routes_);
  visitors_.emplace(msg.get(), Visitor{home, tag, msg});
  return msg;
}

void SplitExecutor::send_away(const Link& link, Ref<Message> msg, std::uint32_t hop, Link::Shape shape, Tick start) {
  if (!link.dst_flit_aware) {
    ByteWriter w = remote_record(link, start + link.whole_ser(shape) + link.latency, std::uint8_t(Record::kWhole));
    encode_crossing(*msg, w);
    return;
  }
  ByteWriter w = remote_record(link, start + link.first_ser(shape) + link.latency, std::uint8_t(Record::kTrain));
  w.put(hop);
  w.put(shape.count);
  w.put(shape.last_bytes);
  w.put(start + link.latency);
  encode_crossing(*msg, w);
}

void SplitExecutor::forward_away(const Link& link, const Flit& flit, Tick arrive) {
  if (!link.dst_flit_aware) {
    if (!flit.last()) return;  // earlier flits only occupy the link; the receiver sees the whole message
    ByteWriter w = remote_record(link, arrive, std::uint8_t(Record::kWhole));
    encode_crossing(*flit.msg, w);
    return;
  }
  // The message goes with its first flit; the others name it by its address here (unique while it is in flight).
  ByteWriter w = remote_record(link, arrive, std::uint8_t(Record::kFlit));
  w.put(flit.hop + 1);
  w.put(flit.index);
  w.put(flit.count);
  w.put(flit.bytes);
  w.put(reinterpret_cast<std::uintptr_t>(flit.msg));
  if (flit.first()) encode_crossing(*flit.msg, w);
}

void SplitExecutor::receive(std::string_view bytes) {
  const std::vector<Link>& links = sim_.elaboration()->links;
  ByteReader r(bytes);
  while (!r.done()) {
    const auto at = r.get<Tick>();
    const auto root = r.get<std::uint32_t>();
    const auto lane = r.get<std::uint64_t>();
    const auto scheduled = r.get<std::uint64_t>();
    const auto index = r.get<std::uint32_t>();
    const auto kind = static_cast<Record>(r.get<std::uint8_t>());
    if (index >= links.size() || !runs(links[index].dst) || kind > Record::kFlit ||
        (kind != Record::kWhole) != links[index].dst_flit_aware)
      throw SimError("a message from another rank names link " + std::to_string(index) +
                     ", not one into this rank that takes what came");
    const Link& link = links[index];
    // All of the record first (it may be wrong), then its event.
    std::uint32_t hop = 0, flit = 0, count = 1, flit_bytes = 0, last_bytes = 0;
    Tick train_start = 0;
    Ref<Message> msg;
    if (kind == Record::kTrain) {
      hop = r.get<std::uint32_t>();
      count = r.get<std::uint32_t>();
      last_bytes = r.get<std::uint32_t>();
      train_start = r.get<Tick>();
      flit_bytes = count > 1 ? link.flit_bytes : last_bytes;
    } else if (kind == Record::kFlit) {
      hop = r.get<std::uint32_t>();
      flit = r.get<std::uint32_t>();
      count = r.get<std::uint32_t>();
      flit_bytes = r.get<std::uint32_t>();
      const std::pair<std::uint32_t, std::uintptr_t> key{index, r.get<std::uintptr_t>()};
      if (flit == 0) {
        msg = decode_crossing(r);
        if (count > 1) in_flight_[key] = msg;
      } else if (auto it = in_flight_.find(key); it != in_flight_.end()) {
        msg = it->second;
        if (flit + 1 >= count) in_flight_.erase(it);
      } else {
        throw SimError("a flit from another rank on link " + std::to_string(index) + " belongs to no message");
      }
    }
    if (!msg) msg = decode_crossing(r);
    msg->stamp_sender(&sim_.elaboration()->ids[link.src]);
    EventId id;
    Event& ev = arrival(sim_, at, {root, lane}, kind == Record::kWhole ? EventKind::kMessage : EventKind::kFlit,
                        link.dst, &id);  // the sender's order, not one of this rank's
    if (placing_) tie_slot(id.slot, scheduled);
    ev.port = link.dst_port;
    ev.take(std::move(msg));
    if (kind == Record::kWhole) continue;
    ev.hop = hop;
    ev.index = flit;
    ev.count = count;
    ev.bytes = flit_bytes;
    if (kind == Record::kTrain) {
      ev.last_bytes = last_bytes;
      ev.train_start = train_start;
      ev.link = index;
      ev.train = count > 1;
    }
  }
}

}  // namespace kbsim::core
