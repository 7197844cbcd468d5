// A system split over ranks (split_executor.hpp): the window loop, the
// statistics every rank gathers, and errors that end every rank.
#include "split/split_executor.hpp"

#include "component/simulation.hpp"
#include "kbsim/text.hpp"
#include "sim/watch.hpp"
#include "split/said.hpp"

namespace kbsim::core {

using namespace said;

SplitExecutor::SplitExecutor(Simulation& sim, const Split& split)
    : sim_(sim),
      engine_(engine(sim)),
      split_(split),
      outbox_(split.partition->ranks),
      routes_(sim.elaboration()->nodes.size()),
      shadow_(std::make_unique<Shadow>(sim, engine(sim), idle_)),
      scheduled_(sim.elaboration()->nodes.size(), 0) {}

SplitExecutor::~SplitExecutor() = default;

MakeExecutor split_executor(const Split& split) {
  return [split](Simulation& sim) { return std::make_unique<SplitExecutor>(sim, split); };
}

const SplitExecutor* split_of(const Simulation& sim) noexcept { return SplitExecutor::of(sim); }

void SplitExecutor::same_log(unsigned rank, bool placing) const {
  if (placing != placing_)
    throw SimError("rank " + std::to_string(rank) + (placing_ ? " keeps no" : " keeps an") + " op log and rank " +
                   std::to_string(split_.rank) + (placing_ ? " does" : " does not") +
                   ": every rank of a split run must run the same observers");
}

void SplitExecutor::outside_handler(NodeIndex from) {
  idle_ = false;  // (every rank runs the bench and every setup alike: on the others, the Shadow notes it)
  // The rank that stopped the run is at its time; another may have simulated up to it or past it (a window runs on),
  // and its components cannot be told anything at a time it has left.
  if (!may_act_)
    fail(sim_, from,
         "is driven by the bench at t=" + format_ns(ticks_to_ns(host_now_)) + " ns, but rank " +
             std::to_string(split_.rank) + " has simulated up to t=" + format_ns(ticks_to_ns(engine_.now())) +
             " ns: in a split run the bench can act only on the part of the system whose rank stopped the run "
             "(docs/scale-out.md)");
}

void SplitExecutor::tie(std::uint32_t slot, NodeIndex from) { tie_slot(slot, ++scheduled_[from]); }

bool SplitExecutor::hold(const Error& e) {
  if (failure_code_ != ExitCode::kOk) return true;  // the first one stopped this rank
  failure_code_ = e.code();
  failure_ = one_line(e.what());
  failure_named_ = dynamic_cast<const RankError*>(&e) != nullptr;
  return true;
}

std::string SplitExecutor::failure_bytes() const { return coded(kFailed, failure_code_, failure_, failure_named_); }

void SplitExecutor::finished() {
  gather_statistics(bench_end());  // what finish() folded in, too; or every rank ends with a rank's error
}

bool SplitExecutor::stop_outside_run() noexcept {
  stop_asked_ = true;  // the bench, on every rank alike: the next run returns at once on every rank
  return true;
}

void SplitExecutor::run_until(Tick t) {
  // Conservative windows: each starts at the earliest pending event of any rank and ends one lookahead later (an
  // event sent across in it arrives after it); what crossed is exchanged at its end. Empty stretches cost nothing.
  Engine& eng = engine_;
  const Tick lookahead = split_.partition->lookahead;
  Transport& net = *split_.transport;
  Tick stop_here = kNever;  // when a component of this rank stopped the run (request_stop), in the last window
  Tick stop = kNever;       // when one of any rank's did
  Place stopped_at;         // and where, in the order of events (placing_)
  Tick next = kNever;       // the earliest event pending anywhere, after the last exchange
  if (stop_asked_) {        // the bench asked before the run, on every rank alike: it returns at once
    stop_asked_ = false;
    gather_statistics(bench_end());
    return;
  }
  while (stop == kNever) {
    if (watch::stop_requested() && failure_code_ == ExitCode::kOk) {
      failure_code_ = ExitCode::kInterrupted;
      failure_ = "the run was stopped at t=" + format_ns(ticks_to_ns(eng.now())) + " ns";
    }
    // What crossed in the last window (or was sent outside a run: setup, a bench) reaches its rank first. The next
    // window starts at the earliest event anywhere: pending on a rank, or on its way to one.
    std::vector<std::string>& out = outbox_;
    if (failure_code_ != ExitCode::kOk) {
      std::fill(out.begin(), out.end(), failure_bytes());
    } else if (stop_here != kNever) {  // every rank hears of it: the byte at the front says so, and when
      std::string head(1, kStopped);
      ByteWriter hw(head);
      hw.put(stop_here);
      hw.put(placing_);
      if (placing_) put_place(hw, pos_);  // where in the order of events: what the others ran after it waits
      for (std::string& box : out) box = box.empty() ? head : head + box.substr(1);
    }
    const Tick mine = std::min(eng.next_time(), outbox_next_);
    outbox_next_ = kNever;
    ++windows_;
    net.exchange(out, mine, received_);        // (one that throws ends the job: what it leaves in the boxes is moot)
    for (std::string& box : out) box.clear();  // sent: their buffers take the next window's messages
    const Transport::Exchanged& in = received_;
    end_if_failed(in.from_rank, split_.rank, kFine);
    next = in.next;
    try {
      for (unsigned rank = 0; rank < in.from_rank.size(); ++rank) {
        std::string_view bytes = in.from_rank[rank];
        if (bytes.empty()) continue;
        if (bytes[0] == kStopped) {
          ByteReader r(bytes.substr(1));
          const auto at = r.get<Tick>();
          if (stop != kNever)
            throw SimError("t=" + format_ns(ticks_to_ns(stop)) +
                           " ns: components of two ranks stopped the run in "
                           "one window (the second at t=" +
                           format_ns(ticks_to_ns(at)) + " ns, on rank " + std::to_string(rank) +
                           "): a split run stops at one place at a time (docs/scale-out.md)");
          stop = at;
          same_log(rank, r.get<bool>());
          if (placing_) stopped_at = get_place(r);
          bytes.remove_prefix(1 + r.offset());
        } else {
          bytes.remove_prefix(1);
        }
        receive(bytes);
      }
    } catch (const Error& e) {
      hold(e);
      stop = kNever;
      continue;  // the next exchange ends every rank with it
    }
    if (stop != kNever || next == kNever || next > t) break;
    const Tick end = lookahead == kNever || t - next < lookahead ? t : next + lookahead - 1;
    try {
      // Time stays at this rank's last event: a window's end is no time of the model.
      if (run_events(sim_, end, false)) stop_here = eng.now();
    } catch (const Error& e) {
      hold(e);  // told to every rank at the next exchange
    }
  }
  idle_ = next == kNever;
  if (stop != kNever) {
    // The run ends where the stop was asked. The rank that asked is there, mid-instant as in one process; the
    // others ran their window to its end: one whose last event came before the stop comes up to it (nothing of its
    // own is left before it), one that ran events at or past it stays, and the bench cannot act on its part (what it
    // did there would come after events that one process runs after it; see outside_handler).
    may_act_ = stop_here != kNever || eng.now() < stop;
    if (stop_here == kNever && eng.now() < stop) run_events(sim_, stop);
    gather_statistics(stopped_at);
    host_now_ = stop;
    return;
  }
  if (t != kNever) run_events(sim_, t);  // nothing is left at or before t on any rank: time moves to t
  const Tick last = gather_statistics(run_end(t));
  if (t == kNever) run_events(sim_, last);  // a run to the end ends at the last event of any rank, on every rank
  host_now_ = t != kNever ? t : last;
  may_act_ = true;  // every rank ran what one process runs up to there, and is there
}

Tick SplitExecutor::gather_statistics(const Place& last) {
  // Each node's statistics and each link's traffic are its owner's (a link's: its sender's); every rank gets all.
  const std::vector<Link>& links = sim_.elaboration()->links;
  std::vector<Wire>& wires = Executor::wires(sim_);
  std::vector<Load>& loads = Executor::loads(sim_);
  const std::vector<std::uint32_t>& stat_begin = sim_.elaboration()->stat_begin;
  const std::size_t nodes = sim_.elaboration()->nodes.size();
  std::string mine(1, kGathered);
  ByteWriter w(mine);
  w.put(engine_.events());
  w.put(engine_.now());
  // Only what changed since the last gather (all of it the first time): a run touches a few paths of the system.
  std::vector<Stat>& stats = Executor::stats(sim_);
  const bool first = !gathered_;
  if (first) {
    agreed_stats_.resize(stats.size());
    agreed_wires_.resize(wires.size());
    gathered_ = true;
  }
  for (NodeIndex n = 0; n < nodes; ++n)
    if (runs(n))
      for (std::uint32_t k = stat_begin[n]; k < stat_begin[n + 1]; ++k)
        if (first || !same(stats[k], agreed_stats_[k])) {
          w.put(k);
          w.put(stats[k]);
          agreed_stats_[k] = stats[k];
        }
  w.put(kNoMore);
  for (std::size_t p = 0; p < wires.size(); ++p)
    if (runs(links[p].src) && (first || agreed_wires_[p] != WireTraffic{wires[p].messages, loads[p]})) {
      w.put(static_cast<std::uint32_t>(p));
      w.put(wires[p].messages);
      w.put(loads[p]);
      agreed_wires_[p] = {wires[p].messages, loads[p]};
    }
  w.put(kNoMore);
  // What components told services the bench reads, which happened only here (ReplicatedService).
  const std::vector<std::pair<std::string, ReplicatedService*>> replicated = sim_.services().replicated();
  w.put(static_cast<std::uint64_t>(replicated.size()));
  for (const auto& [name, r] : replicated) {
    std::string news;
    ByteWriter nw(news);
    r->save_news(nw);
    w.put_string(name);
    w.put_string(news);
  }
  // The op log's records this run settled, made by this rank's handlers (the bench's are alike on every rank).
  OpLog::Settled settled;
  w.put(placing_);  // (every rank must keep the op log, or none)
  if (placing_) try {
      settled = send_records(w, last);
    } catch (const Error& e) {
      hold(e);  // (a record that cannot cross): every rank ends with it at this exchange
    } catch (const std::exception& e) {
      hold(PluginError(std::string("an op-log record's payload could not be saved: ") + e.what()));
    }
  const std::vector<std::string> all =
      split_.transport
          ->exchange(std::vector<std::string>(parts(), failure_code_ == ExitCode::kOk ? mine : failure_bytes()), kNever)
          .from_rank;
  end_if_failed(all, split_.rank, kGathered);
  other_events_ = 0;
  Tick latest = 0;
  std::vector<ByteReader> readers;
  readers.reserve(all.size());
  for (unsigned rank = 0; rank < all.size(); ++rank) {
    ByteReader& r = readers.emplace_back(std::string_view(all[rank]).substr(1));
    const auto events = r.get<std::uint64_t>();
    if (rank != split_.rank) other_events_ += events;
    latest = std::max(latest, r.get<Tick>());
    for (auto k = r.get<std::uint32_t>(); k != kNoMore; k = r.get<std::uint32_t>()) agreed_stats_[k] = r.get<Stat>();
    for (auto p = r.get<std::uint32_t>(); p != kNoMore; p = r.get<std::uint32_t>()) {
      agreed_wires_[p].messages = r.get<std::uint64_t>();
      agreed_wires_[p].load = r.get<Load>();
    }
    for (std::size_t k = r.get_count(); k > 0; --k) {
      const std::string name = r.get_string();
      const std::string_view news = r.get_bytes();
      if (rank == split_.rank) continue;
      auto it = std::find_if(replicated.begin(), replicated.end(), [&](const auto& e) { return e.first == name; });
      if (it == replicated.end())
        throw SimError("rank " + std::to_string(rank) + " has news for service '" + name +
                       "', which this rank's bench never asked for: the ranks' benches went different ways");
      ByteReader nr(news);
      it->second->load_news(nr);
    }
  }
  // What other ranks' nodes and links hold here is what their ranks said (whatever ran here in their name).
  for (NodeIndex n = 0; n < nodes; ++n)
    if (!runs(n))
      std::copy(agreed_stats_.begin() + stat_begin[n], agreed_stats_.begin() + stat_begin[n + 1],
                stats.begin() + stat_begin[n]);
  for (std::size_t p = 0; p < wires.size(); ++p)
    if (!runs(links[p].src)) {
      wires[p].messages = agreed_wires_[p].messages;
      loads[p] = agreed_wires_[p].load;
    }
  for (unsigned rank = 0; rank < all.size(); ++rank) same_log(rank, readers[rank].get<bool>());
  if (placing_) merge_records(std::move(settled), readers);
  return latest;
}

void SplitExecutor::gather_waiting(std::vector<std::pair<NodeIndex, std::string>>& all) {
  // Each rank gives its components' (node, phrase), merged in node order.
  std::string mine(1, kWaits);
  ByteWriter w(mine);
  for (const auto& [n, what] : all) {
    w.put(n);
    w.put_string(what);
  }
  const std::vector<std::string> in =
      split_.transport->exchange(std::vector<std::string>(parts(), mine), kNever).from_rank;
  end_if_failed(in, split_.rank, kWaits);
  all.clear();
  for (const std::string& bytes : in)
    for (ByteReader r(std::string_view(bytes).substr(1)); !r.done();) {
      const auto n = r.get<NodeIndex>();
      all.emplace_back(n, r.get_string());
    }
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

}  // namespace kbsim::core
