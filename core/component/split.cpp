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
  const Partition& p = *split_->split.partition;
  for (std::size_t k = 0; k < links_.size(); ++k) {
    const Link& l = links_[k];
    if (p.rank_of[l.src] == p.rank_of[l.dst] || !l.dst_flit_aware) continue;
    throw ConfigError("this system cannot be split over " + std::to_string(p.ranks) + " ranks yet: its '" +
                      link_kinds_[k] + "' link " + nodes_[l.src].id + " -> " + nodes_[l.dst].id +
                      " would be cut, and " + nodes_[l.dst].id +
                      " takes flits, which cannot cross between processes (docs/scale-out.md); --partition none "
                      "runs the whole system on every rank");
  }
}

void Simulation::send_remote(const Wire& wire, const Link& link, Ref<Message> msg, Link::Shape shape, Tick start) {
  // (no cut link leads to a receiver of flits: check_cut_links refused the split)
  const Tick at = start + link.whole_ser(shape) + link.latency;
  const Order order = order_for(at, link.src);
  split_->outbox_next = std::min(split_->outbox_next, at);
  std::string& box = split_->outbox[split_->split.partition->rank_of[link.dst]];
  if (box.empty()) box.push_back(kFine);
  ByteWriter w(box);
  w.put(at);
  w.put(order.root);
  w.put(order.lane);
  w.put(wire.link);
  encode_message(registry_, *msg, w);
}

void Simulation::receive(std::string_view bytes) {
  ByteReader r(bytes);
  while (!r.done()) {
    const auto at = r.get<Tick>();
    const auto root = r.get<std::uint32_t>();
    const auto lane = r.get<std::uint64_t>();
    const auto index = r.get<std::uint32_t>();
    if (index >= links_.size() || !owned(links_[index].dst))
      throw SimError("a message from another rank names link " + std::to_string(index) + ", not one into this rank");
    const Link& link = links_[index];
    Ref<Message> msg = decode_message(registry_, r);
    msg->stamp_sender(&ids_[link.src]);
    Event& ev = engine_.schedule(at, 128, {root, lane});  // the sender's order, not one of this rank's
    ev.target = this;
    ev.set_kind(EventKind::kMessage);
    ev.hint = components_[link.dst].get();
    ev.take(std::move(msg));
    ev.port = link.dst_port;
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
      run_events(end);
    } catch (const Error& e) {
      hold_failure(e);  // told to every rank at the next exchange
    }
  }
  run_events(t);  // nothing is left at or before t on any rank: time moves to t
  gather_statistics();
}

void Simulation::gather_statistics() {
  // Each node's statistics and each link's traffic are its owner's (a link's: its sender's); every rank gets all.
  std::string mine(1, kFine);
  ByteWriter w(mine);
  w.put(engine_.events());
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
  for (unsigned rank = 0; rank < all.size(); ++rank) {
    ByteReader r(std::string_view(all[rank]).substr(1));
    const auto events = r.get<std::uint64_t>();
    if (rank != split.rank) split_->other_events += events;
    for (NodeIndex n = 0; n < nodes_.size(); ++n)
      if (split.partition->rank_of[n] == rank)
        for (std::uint32_t k = el_->stat_begin[n]; k < el_->stat_begin[n + 1]; ++k) stats_[k] = r.get<Stat>();
    for (std::size_t p = 0; p < wires_.size(); ++p)
      if (split.partition->rank_of[links_[wires_[p].link].src] == rank) {
        wires_[p].messages = r.get<std::uint64_t>();
        loads_[p] = r.get<Load>();
      }
  }
}

}  // namespace kbsim::core
