// A system split over ranks (split.hpp): what crosses a cut link, the window
// loop, the statistics every rank gathers, and errors that end every rank.
#include "component/split.hpp"

#include "component/crossing.hpp"
#include "component/simulation.hpp"
#include "kbsim/text.hpp"
#include "sim/watch.hpp"

namespace kbsim::core {

namespace {
// Every string a rank sends in a collective starts with one byte: kFine, or kFailed followed by the exit code and
// the message of the error that stopped the rank (sent to every rank, which all then end with it).
constexpr char kFine = 0, kFailed = 1;
}  // namespace

void Simulation::check_cut_links() const {
  // Every rank builds the whole graph, so every rank refuses the same way, before anything runs.
  const ParamValue* refused = find_attr(attrs_, kSplitRefusedAttr);
  if (refused && std::holds_alternative<std::string>(*refused))
    throw ConfigError("this system cannot be split over " + std::to_string(split_->split.partition->ranks) +
                      " ranks yet: " + std::get<std::string>(*refused) +
                      " (docs/scale-out.md); --partition none runs the whole system on every rank");
}

namespace {
// What a cut link carries, each as one record: a whole message, a train of flits (all of one message, arriving
// back to back, as a receiver of flits takes a message sent to it whole), or one flit a forwarder passed on.
enum class Record : std::uint8_t { kWhole, kTrain, kFlit };
}  // namespace

ByteWriter Simulation::remote_record(const Link& link, Tick at, std::uint8_t kind) {
  // Arrival time and order key (the one a local event of that arrival would get), the link, the kind.
  const Order order = order_for(at, link.src);
  split_->outbox_next = std::min(split_->outbox_next, at);
  std::string& box = split_->outbox[split_->split.partition->rank_of[link.dst]];
  if (box.empty()) box.push_back(kFine);
  ByteWriter w(box);
  w.put(at);
  w.put(order.root);
  w.put(order.lane);
  w.put(static_cast<std::uint32_t>(&link - links_.data()));
  w.put(kind);
  return w;
}

void Simulation::send_remote(const Link& link, Ref<Message> msg, std::uint32_t hop, Link::Shape shape, Tick start) {
  if (!link.dst_flit_aware) {
    ByteWriter w = remote_record(link, start + link.whole_ser(shape) + link.latency, std::uint8_t(Record::kWhole));
    encode_message(registry_, *msg, w);
    return;
  }
  const Tick first_ser = shape.count > 1 ? link.ser_full : link.ser(shape.last_bytes);
  ByteWriter w = remote_record(link, start + first_ser + link.latency, std::uint8_t(Record::kTrain));
  w.put(hop);
  w.put(shape.count);
  w.put(shape.last_bytes);
  w.put(start + link.latency);
  encode_message(registry_, *msg, w);
}

void Simulation::forward_remote(const Link& link, const Flit& flit, Tick arrive) {
  if (!link.dst_flit_aware) {
    if (!flit.last()) return;  // earlier flits only occupy the link; the receiver sees the whole message
    ByteWriter w = remote_record(link, arrive, std::uint8_t(Record::kWhole));
    encode_message(registry_, *flit.msg, w);
    return;
  }
  // The message goes with its first flit; the others name it by its address here (unique while it is in flight).
  ByteWriter w = remote_record(link, arrive, std::uint8_t(Record::kFlit));
  w.put(flit.hop + 1);
  w.put(flit.index);
  w.put(flit.count);
  w.put(flit.bytes);
  w.put(reinterpret_cast<std::uintptr_t>(flit.msg));
  if (flit.first()) encode_message(registry_, *flit.msg, w);
}

void Simulation::receive(std::string_view bytes) {
  SplitState& st = *split_;
  if (!st.routes) st.routes = std::make_unique<RouteStore>(nodes_.size());
  ByteReader r(bytes);
  while (!r.done()) {
    const auto at = r.get<Tick>();
    const auto root = r.get<std::uint32_t>();
    const auto lane = r.get<std::uint64_t>();
    const auto index = r.get<std::uint32_t>();
    const auto kind = static_cast<Record>(r.get<std::uint8_t>());
    if (index >= links_.size() || !owned(links_[index].dst) || kind > Record::kFlit ||
        (kind != Record::kWhole) != links_[index].dst_flit_aware)
      throw SimError("a message from another rank names link " + std::to_string(index) +
                     ", not one into this rank that takes what came");
    const Link& link = links_[index];
    Event& ev = engine_.schedule(at, 128, {root, lane});  // the sender's order, not one of this rank's
    ev.target = this;
    ev.hint = components_[link.dst].get();
    ev.port = link.dst_port;
    if (kind == Record::kWhole) {
      ev.set_kind(EventKind::kMessage);
      ev.take(decode_message(registry_, r, st.routes.get()));
    } else if (kind == Record::kTrain) {
      ev.set_kind(EventKind::kFlit);
      ev.hop = r.get<std::uint32_t>();
      ev.index = 0;
      ev.count = r.get<std::uint32_t>();
      ev.last_bytes = r.get<std::uint32_t>();
      ev.train_start = r.get<Tick>();
      ev.bytes = ev.count > 1 ? link.flit_bytes : ev.last_bytes;
      ev.link = index;
      ev.train = ev.count > 1;
      ev.take(decode_message(registry_, r, st.routes.get()));
    } else {
      ev.set_kind(EventKind::kFlit);
      ev.hop = r.get<std::uint32_t>();
      ev.index = r.get<std::uint32_t>();
      ev.count = r.get<std::uint32_t>();
      ev.bytes = r.get<std::uint32_t>();
      const std::pair<std::uint32_t, std::uintptr_t> key{index, r.get<std::uintptr_t>()};
      Ref<Message> msg;
      if (ev.index == 0) {
        msg = decode_message(registry_, r, st.routes.get());
        if (ev.count > 1) st.in_flight[key] = msg;
      } else if (auto it = st.in_flight.find(key); it != st.in_flight.end()) {
        msg = it->second;
        if (ev.index + 1 >= ev.count) st.in_flight.erase(it);
      } else {
        throw SimError("a flit from another rank on link " + std::to_string(index) + " belongs to no message");
      }
      ev.take(std::move(msg));
    }
    ev.msg->stamp_sender(&ids_[link.src]);
  }
}

void Simulation::hold_failure(const Error& e) {
  if (split_->failure_code != ExitCode::kOk) return;  // the first one stopped this rank
  split_->failure_code = e.code();
  split_->failure = one_line(e.what());
}

std::string Simulation::failure_bytes() const {
  std::string out(1, kFailed);
  ByteWriter w(out);
  w.put(static_cast<std::int32_t>(split_->failure_code));
  w.put_string(split_->failure);
  return out;
}

void Simulation::end_if_failed(const std::vector<std::string>& from_rank) {
  // The lowest failing rank's error, the same on every rank.
  for (unsigned rank = 0; rank < from_rank.size(); ++rank) {
    if (from_rank[rank].empty() || from_rank[rank][0] != kFailed) continue;
    ByteReader r(std::string_view(from_rank[rank]).substr(1));
    const auto code = static_cast<ExitCode>(r.get<std::int32_t>());
    const std::string what = r.get_string();
    if (code == ExitCode::kInterrupted) throw BenchError("INTERRUPTED", what);
    throw RankError(code, "rank " + std::to_string(rank) + " of " + std::to_string(from_rank.size()) + ": " + what);
  }
}

void Simulation::run_split(Tick t) {
  // Conservative windows: each starts at the earliest pending event of any rank and ends one lookahead later (an
  // event sent across in it arrives after it); what crossed is exchanged at its end. Empty stretches cost nothing.
  SplitState& st = *split_;
  const Tick lookahead = st.split.partition->lookahead;
  Transport& net = *st.split.transport;
  for (;;) {
    if (watch::stop_requested() && st.failure_code == ExitCode::kOk) {
      st.failure_code = ExitCode::kInterrupted;
      st.failure = "the run was stopped at t=" + format_ns(ticks_to_ns(now())) + " ns";
    }
    // What crossed in the last window (or was sent outside a run: setup, a bench) reaches its rank first. The next
    // window starts at the earliest event anywhere: pending on a rank, or on its way to one.
    std::vector<std::string> out(st.outbox.size());
    out.swap(st.outbox);
    if (st.failure_code != ExitCode::kOk) std::fill(out.begin(), out.end(), failure_bytes());
    const Tick mine = std::min(engine_.next_time(), st.outbox_next);
    st.outbox_next = kNever;
    ++st.windows;
    Transport::Exchanged in = net.exchange(std::move(out), mine);
    end_if_failed(in.from_rank);
    try {
      for (const std::string& bytes : in.from_rank)
        if (!bytes.empty()) receive(std::string_view(bytes).substr(1));
    } catch (const Error& e) {
      hold_failure(e);
      continue;  // the next exchange ends every rank with it
    }
    if (in.next == kNever || in.next > t) break;
    const Tick end = lookahead == kNever || t - in.next < lookahead ? t : in.next + lookahead - 1;
    try {
      run_events(end, false);  // time stays at this rank's last event: a window's end is no time of the model
    } catch (const Error& e) {
      hold_failure(e);  // told to every rank at the next exchange
    }
  }
  if (t != kNever) run_events(t);  // nothing is left at or before t on any rank: time moves to t
  const Tick last = gather_statistics();
  if (t == kNever) run_events(last);  // a run to the end ends at the last event of any rank, on every rank
}

Tick Simulation::gather_statistics() {
  // Each node's statistics and each link's traffic are its owner's (a link's: its sender's); every rank gets all.
  std::string mine(1, kFine);
  ByteWriter w(mine);
  w.put(engine_.events());
  w.put(now());
  for (NodeIndex n = 0; n < nodes_.size(); ++n)
    if (owned(n))
      for (const Stat& st : node_stats(n)) w.put(st);
  for (std::size_t p = 0; p < wires_.size(); ++p)
    if (owned(links_[wires_[p].link].src)) {
      w.put(wires_[p].messages);
      w.put(loads_[p]);
    }
  const Split& split = split_->split;
  const std::vector<std::string> all =
      split.transport->gather(split_->failure_code == ExitCode::kOk ? mine : failure_bytes());
  end_if_failed(all);
  split_->other_events = 0;
  Tick last = 0;
  for (unsigned rank = 0; rank < all.size(); ++rank) {
    ByteReader r(std::string_view(all[rank]).substr(1));
    const auto events = r.get<std::uint64_t>();
    if (rank != split.rank) split_->other_events += events;
    last = std::max(last, r.get<Tick>());
    for (NodeIndex n = 0; n < nodes_.size(); ++n)
      if (split.partition->rank_of[n] == rank)
        for (std::uint32_t k = el_->stat_begin[n]; k < el_->stat_begin[n + 1]; ++k) stats_[k] = r.get<Stat>();
    for (std::size_t p = 0; p < wires_.size(); ++p)
      if (split.partition->rank_of[links_[wires_[p].link].src] == rank) {
        wires_[p].messages = r.get<std::uint64_t>();
        loads_[p] = r.get<Load>();
      }
  }
  return last;
}

}  // namespace kbsim::core
