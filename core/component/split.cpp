// A system split over ranks (split.hpp): what crosses a cut link, the window
// loop, the statistics every rank gathers, and errors that end every rank.
#include "component/split.hpp"

#include "component/crossing.hpp"
#include "component/simulation.hpp"
#include "kbsim/text.hpp"
#include "kbsim/waiting.hpp"
#include "sim/watch.hpp"

namespace kbsim::core {

namespace {
// Every string a rank sends in a collective starts with one byte saying what it is: a window's messages (kFine, or
// kStopped, the time a component of the rank stopped the run and, with an op log, its place), statistics after a
// run (kGathered, and the op log's records it settled), the error
// that stopped the rank (kFailed: its exit code and message; every rank then ends with it), or that the rank has left
// (kLeft: its exit code, kOk or its error's, and the error), or what its components wait for (kWaits). An empty
// string is a window with nothing to send.
constexpr char kFine = 0, kFailed = 1, kStopped = 2, kGathered = 3, kLeft = 4, kWaits = 5;

/// An error as bytes: its exit code, whether its words already name the rank it happened on (an error a rank passed
/// on from another), and its words.
std::string coded(char kind, ExitCode code, const std::string& what, bool named) {
  std::string out(1, kind);
  ByteWriter w(out);
  w.put(static_cast<std::int32_t>(code));
  w.put(named);
  w.put_string(what);
  return out;
}

/// What `coded` wrote, as rank `rank` of `ranks` said it.
struct Said {
  ExitCode code;
  std::string words;  ///< as the rank said it
  std::string named;  ///< naming the rank
};
Said said(const std::string& in, unsigned rank, unsigned ranks) {
  ByteReader r(std::string_view(in).substr(1));
  Said s{static_cast<ExitCode>(r.get<std::int32_t>()), {}, {}};
  const bool named = r.get<bool>();
  s.words = r.get_string();
  s.named = named ? s.words : "rank " + std::to_string(rank) + " of " + std::to_string(ranks) + ": " + s.words;
  return s;
}
}  // namespace

void Simulation::same_log(unsigned rank, bool placing) const {
  if (placing != placing_)
    throw SimError("rank " + std::to_string(rank) + (placing_ ? " keeps no" : " keeps an") + " op log and rank " +
                   std::to_string(split_->split.rank) + (placing_ ? " does" : " does not") +
                   ": every rank of a split run must run the same observers");
}

void Simulation::host_acts(NodeIndex from) {
  SplitState& st = *split_;
  st.idle = false;  // (every rank runs the bench and every setup alike: on the others, the Shadow notes it)
  // The rank that stopped the run is at its time; another may have simulated up to it or past it (a window runs on),
  // and its components cannot be told anything at a time it has left.
  if (!st.may_act)
    fail(from, "is driven by the bench at t=" + format_ns(ticks_to_ns(st.host_now)) + " ns, but rank " +
                   std::to_string(st.split.rank) + " has simulated up to t=" + format_ns(ticks_to_ns(engine_.now())) +
                   " ns: in a split run the bench can act only on the part of the system whose rank stopped the run "
                   "(docs/scale-out.md)");
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
  w.put(++split_->scheduled[link.src]);  // the last tie of its order (split_log.cpp; also before an op log is set)
  w.put(static_cast<std::uint32_t>(&link - links_.data()));
  w.put(kind);
  return w;
}

void Simulation::encode_crossing(const Message& msg, ByteWriter& w) {
  // Whose object it is: a visitor (it came from another rank) carries its home's tag on, home or elsewhere; one
  // that will come back (a request, or its answer on its way home through other ranks) is kept here under a tag of
  // its own until it does; anything else goes untagged.
  SplitState& st = *split_;
  std::uint32_t home = kNoHome;
  std::uint64_t tag = 0;
  if (auto it = st.visitors.find(&msg); it != st.visitors.end()) {
    home = it->second.home;
    tag = it->second.tag;
    st.visitors.erase(it);
  } else if (msg.returns()) {
    home = st.split.rank;
    tag = st.next_tag++;
    st.away.emplace(tag, Ref<Message>(const_cast<Message*>(&msg)));
  }
  w.put(home);
  if (home != kNoHome) w.put(tag);
  encode_message(registry_, msg, w);
}

Ref<Message> Simulation::decode_crossing(ByteReader& r) {
  SplitState& st = *split_;
  const auto home = r.get<std::uint32_t>();
  if (home == kNoHome) return decode_message(registry_, r, st.routes.get());
  const auto tag = r.get<std::uint64_t>();
  if (home == st.split.rank) {  // an answer: the request that left, with what the other ranks made of it
    auto it = st.away.find(tag);
    if (it == st.away.end())
      throw SimError("an answer from another rank names request " + std::to_string(tag) + ", which did not leave here");
    Ref<Message> msg = std::move(it->second);
    st.away.erase(it);
    decode_message_into(r, *msg, st.routes.get());
    return msg;
  }
  Ref<Message> msg = decode_message(registry_, r, st.routes.get());
  st.visitors.emplace(msg.get(), SplitState::Visitor{home, tag, msg});
  return msg;
}

void Simulation::send_remote(const Link& link, Ref<Message> msg, std::uint32_t hop, Link::Shape shape, Tick start) {
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

void Simulation::forward_remote(const Link& link, const Flit& flit, Tick arrive) {
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

void Simulation::receive(std::string_view bytes) {
  SplitState& st = *split_;
  ByteReader r(bytes);
  while (!r.done()) {
    const auto at = r.get<Tick>();
    const auto root = r.get<std::uint32_t>();
    const auto lane = r.get<std::uint64_t>();
    const auto scheduled = r.get<std::uint64_t>();
    const auto index = r.get<std::uint32_t>();
    const auto kind = static_cast<Record>(r.get<std::uint8_t>());
    if (index >= links_.size() || !owned(links_[index].dst) || kind > Record::kFlit ||
        (kind != Record::kWhole) != links_[index].dst_flit_aware)
      throw SimError("a message from another rank names link " + std::to_string(index) +
                     ", not one into this rank that takes what came");
    const Link& link = links_[index];
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
        if (count > 1) st.in_flight[key] = msg;
      } else if (auto it = st.in_flight.find(key); it != st.in_flight.end()) {
        msg = it->second;
        if (flit + 1 >= count) st.in_flight.erase(it);
      } else {
        throw SimError("a flit from another rank on link " + std::to_string(index) + " belongs to no message");
      }
    }
    if (!msg) msg = decode_crossing(r);
    msg->stamp_sender(&ids_[link.src]);
    EventId id;
    Event& ev = engine_.schedule(at, 128, {root, lane}, &id);  // the sender's order, not one of this rank's
    if (placing_) st.tie(id.slot, scheduled);
    ev.target = this;
    ev.hint = components_[link.dst].get();
    ev.set_kind(kind == Record::kWhole ? EventKind::kMessage : EventKind::kFlit);
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

void Simulation::hold_failure(const Error& e) {
  if (split_->failure_code != ExitCode::kOk) return;  // the first one stopped this rank
  split_->failure_code = e.code();
  split_->failure = one_line(e.what());
  split_->failure_named = dynamic_cast<const RankError*>(&e) != nullptr;
}

std::string Simulation::failure_bytes() const {
  return coded(kFailed, split_->failure_code, split_->failure, split_->failure_named);
}

namespace {

/// What ranks say in an exchange: the lowest failing rank's error, the same on every rank; else that a rank left, or
/// is doing something else than `kind` (a window's exchange, kGathered or kWaits), as the end of the job.
void end_if_failed(const std::vector<std::string>& from_rank, unsigned me, char kind) {
  const auto ranks = static_cast<unsigned>(from_rank.size());
  auto what = [](const std::string& in) { return in.empty() ? kFine : in[0]; };
  for (unsigned rank = 0; rank < ranks; ++rank) {
    const char got = what(from_rank[rank]);
    if (got != kFailed && got != kLeft) continue;
    const Said s = said(from_rank[rank], rank, ranks);
    if (s.code == ExitCode::kInterrupted) throw BenchError("INTERRUPTED", s.words);
    if (s.code != ExitCode::kOk) throw RankError(s.code, s.named);
  }
  auto doing = [](char k) {
    return k == kLeft                    ? "finished its bench"
           : k == kFine || k == kStopped ? "runs its system"
           : k == kGathered              ? "ended a run"
                                         : "asks what components wait for";
  };
  auto same = [](char a, char b) { return a == b || ((a == kFine || a == kStopped) && (b == kFine || b == kStopped)); };
  for (unsigned rank = 0; rank < ranks; ++rank)
    if (const char got = what(from_rank[rank]); !same(got, kind))
      throw SimError("rank " + std::to_string(me) + " of " + std::to_string(ranks) +
                     ": the ranks' benches went different ways: rank " + std::to_string(rank) + " " + doing(got) +
                     " while this one " + doing(kind) + " (a bench must do the same on every rank, docs/scale-out.md)");
}

}  // namespace

std::optional<RankError> leave_split(Transport& transport, unsigned rank, unsigned ranks, ExitCode code,
                                     const std::string& what, bool named) {
  std::optional<RankError> other;
  for (;;) {
    const Transport::Exchanged in =
        transport.exchange(std::vector<std::string>(ranks, coded(kLeft, code, what, named)), kNever);
    bool all = true;
    for (unsigned r = 0; r < ranks; ++r) {
      const std::string& got = in.from_rank[r];
      if (got.empty() || got[0] != kLeft) {
        all = false;  // still running: it learns of this at its exchange, and leaves next
        continue;
      }
      const Said s = said(got, r, ranks);
      if (r != rank && s.code != ExitCode::kOk && code == ExitCode::kOk && !other) other.emplace(s.code, s.named);
    }
    if (all) return other;
  }
}

void run_together(Transport& transport, unsigned rank, unsigned ranks, const std::function<void()>& work) {
  try {
    work();
  } catch (const std::exception& e) {
    const auto* error = dynamic_cast<const Error*>(&e);
    leave_split(transport, rank, ranks, error ? error->code() : ExitCode::kInternal, one_line(e.what()),
                dynamic_cast<const RankError*>(&e) != nullptr);
    throw;
  }
  if (auto other = leave_split(transport, rank, ranks, ExitCode::kOk, "", false)) throw *other;
}

void Simulation::run_split(Tick t) {
  // Conservative windows: each starts at the earliest pending event of any rank and ends one lookahead later (an
  // event sent across in it arrives after it); what crossed is exchanged at its end. Empty stretches cost nothing.
  SplitState& st = *split_;
  const Tick lookahead = st.split.partition->lookahead;
  Transport& net = *st.split.transport;
  Tick stop_here = kNever;  // when a component of this rank stopped the run (request_stop), in the last window
  Tick stop = kNever;       // when one of any rank's did
  Place stopped_at;         // and where, in the order of events (placing_)
  Tick next = kNever;       // the earliest event pending anywhere, after the last exchange
  if (st.stop_asked) {      // the bench asked before the run, on every rank alike: it returns at once
    st.stop_asked = false;
    gather_statistics(bench_end());
    return;
  }
  while (stop == kNever) {
    if (watch::stop_requested() && st.failure_code == ExitCode::kOk) {
      st.failure_code = ExitCode::kInterrupted;
      st.failure = "the run was stopped at t=" + format_ns(ticks_to_ns(engine_.now())) + " ns";
    }
    // What crossed in the last window (or was sent outside a run: setup, a bench) reaches its rank first. The next
    // window starts at the earliest event anywhere: pending on a rank, or on its way to one.
    std::vector<std::string>& out = st.outbox;
    if (st.failure_code != ExitCode::kOk) {
      std::fill(out.begin(), out.end(), failure_bytes());
    } else if (stop_here != kNever) {  // every rank hears of it: the byte at the front says so, and when
      std::string head(1, kStopped);
      ByteWriter hw(head);
      hw.put(stop_here);
      hw.put(placing_);
      if (placing_) put_place(hw, st.pos);  // where in the order of events: what the others ran after it waits
      for (std::string& box : out) box = box.empty() ? head : head + box.substr(1);
    }
    const Tick mine = std::min(engine_.next_time(), st.outbox_next);
    st.outbox_next = kNever;
    ++st.windows;
    net.exchange(out, mine, st.received);      // (one that throws ends the job: what it leaves in the boxes is moot)
    for (std::string& box : out) box.clear();  // sent: their buffers take the next window's messages
    const Transport::Exchanged& in = st.received;
    end_if_failed(in.from_rank, st.split.rank, kFine);
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
      hold_failure(e);
      stop = kNever;
      continue;  // the next exchange ends every rank with it
    }
    if (stop != kNever || next == kNever || next > t) break;
    const Tick end = lookahead == kNever || t - next < lookahead ? t : next + lookahead - 1;
    try {
      // Time stays at this rank's last event: a window's end is no time of the model.
      if (run_events(end, false)) stop_here = engine_.now();
    } catch (const Error& e) {
      hold_failure(e);  // told to every rank at the next exchange
    }
  }
  st.idle = next == kNever;
  if (stop != kNever) {
    // The run ends where the stop was asked. The rank that asked is there, mid-instant as in one process; the
    // others ran their window to its end: one whose last event came before the stop comes up to it (nothing of its
    // own is left before it), one that ran events at or past it stays, and the bench cannot act on its part (what it
    // did there would come after events that one process runs after it; see host_acts).
    st.may_act = stop_here != kNever || engine_.now() < stop;
    if (stop_here == kNever && engine_.now() < stop) run_events(stop);
    gather_statistics(stopped_at);
    st.host_now = stop;
    return;
  }
  if (t != kNever) run_events(t);  // nothing is left at or before t on any rank: time moves to t
  const Tick last = gather_statistics(run_end(t));
  if (t == kNever) run_events(last);  // a run to the end ends at the last event of any rank, on every rank
  st.host_now = t != kNever ? t : last;
  st.may_act = true;  // every rank ran what one process runs up to there, and is there
}

void Simulation::request_stop() noexcept {
  if (split_ && !engine_.dispatching()) {
    split_->stop_asked = true;  // the bench, on every rank alike: the next run returns at once on every rank
    return;
  }
  engine_.stop();
}

Tick Simulation::gather_statistics(const Place& last) {
  // Each node's statistics and each link's traffic are its owner's (a link's: its sender's); every rank gets all.
  std::string mine(1, kGathered);
  ByteWriter w(mine);
  w.put(engine_.events());
  w.put(engine_.now());
  for (NodeIndex n = 0; n < nodes_.size(); ++n)
    if (owned(n))
      for (const Stat& st : node_stats(n)) w.put(st);
  for (std::size_t p = 0; p < wires_.size(); ++p)
    if (owned(links_[wires_[p].link].src)) {
      w.put(wires_[p].messages);
      w.put(loads_[p]);
    }
  // What components told services the bench reads, which happened only here (ReplicatedService).
  std::vector<std::pair<std::string, ReplicatedService*>> replicated;
  for (const auto& [name, svc] : services_)
    if (auto* r = dynamic_cast<ReplicatedService*>(svc)) replicated.emplace_back(name, r);
  for (std::size_t k = 0; k < shared_.size(); ++k)
    replicated.emplace_back("the bench's #" + std::to_string(k), shared_[k]);
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
      hold_failure(e);  // (a record that cannot cross): every rank ends with it at this exchange
    } catch (const std::exception& e) {
      hold_failure(PluginError(std::string("an op-log record's payload could not be saved: ") + e.what()));
    }
  const Split& split = split_->split;
  const std::vector<std::string> all =
      split.transport
          ->exchange(std::vector<std::string>(split.partition->ranks,
                                              split_->failure_code == ExitCode::kOk ? mine : failure_bytes()),
                     kNever)
          .from_rank;
  end_if_failed(all, split.rank, kGathered);
  split_->other_events = 0;
  Tick latest = 0;
  std::vector<ByteReader> readers;
  readers.reserve(all.size());
  for (unsigned rank = 0; rank < all.size(); ++rank) {
    ByteReader& r = readers.emplace_back(std::string_view(all[rank]).substr(1));
    const auto events = r.get<std::uint64_t>();
    if (rank != split.rank) split_->other_events += events;
    latest = std::max(latest, r.get<Tick>());
    for (NodeIndex n = 0; n < nodes_.size(); ++n)
      if (split.partition->rank_of[n] == rank)
        for (std::uint32_t k = el_->stat_begin[n]; k < el_->stat_begin[n + 1]; ++k) stats_[k] = r.get<Stat>();
    for (std::size_t p = 0; p < wires_.size(); ++p)
      if (split.partition->rank_of[links_[wires_[p].link].src] == rank) {
        wires_[p].messages = r.get<std::uint64_t>();
        loads_[p] = r.get<Load>();
      }
    for (std::size_t k = r.get_count(); k > 0; --k) {
      const std::string name = r.get_string();
      const std::string_view news = r.get_bytes();
      if (rank == split.rank) continue;
      auto it = std::find_if(replicated.begin(), replicated.end(), [&](const auto& e) { return e.first == name; });
      if (it == replicated.end())
        throw SimError("rank " + std::to_string(rank) + " has news for service '" + name +
                       "', which this rank's bench never asked for: the ranks' benches went different ways");
      ByteReader nr(news);
      it->second->load_news(nr);
    }
  }
  for (unsigned rank = 0; rank < all.size(); ++rank) same_log(rank, readers[rank].get<bool>());
  if (placing_) merge_records(std::move(settled), readers);
  return latest;
}

std::vector<std::string> Simulation::waiting() {
  // (node, phrase) of this rank's components; a split system's ranks each give theirs, merged in node order.
  std::vector<std::pair<NodeIndex, std::string>> all;
  for (NodeIndex n = 0; n < nodes_.size(); ++n)
    if (owned(n))
      if (const auto* w = dynamic_cast<const Waiting*>(components_[n].get()))
        if (std::string what = w->waiting_for(); !what.empty()) all.emplace_back(n, std::move(what));
  if (split_) {
    std::string mine(1, kWaits);
    ByteWriter w(mine);
    for (const auto& [n, what] : all) {
      w.put(n);
      w.put_string(what);
    }
    const Split& split = split_->split;
    const std::vector<std::string> in =
        split.transport->exchange(std::vector<std::string>(split.partition->ranks, mine), kNever).from_rank;
    end_if_failed(in, split.rank, kWaits);
    all.clear();
    for (const std::string& bytes : in)
      for (ByteReader r(std::string_view(bytes).substr(1)); !r.done();) {
        const auto n = r.get<NodeIndex>();
        all.emplace_back(n, r.get_string());
      }
    std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  std::vector<std::string> out;
  for (auto& [n, what] : all) out.push_back(std::move(what));
  return out;
}

}  // namespace kbsim::core
