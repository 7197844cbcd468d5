// The executor of a system split over the ranks of a job (docs/scale-out.md):
// this rank runs the events of its part; what its components send to another
// rank's is written to that rank's outbox and exchanged at the end of a
// conservative window; after each run every rank gathers every node's
// statistics, and, with an op log, the records the run settled, merged in the
// order one process logs them (split_log.cpp). Errors end every rank together.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "component/executor.hpp"
#include "component/op_log.hpp"
#include "split/crossing.hpp"
#include "split/split.hpp"

namespace kbsim::core {

class SplitExecutor final : public Executor {
 public:
  SplitExecutor(Simulation& sim, const Split& split);
  ~SplitExecutor() override;

  /// The split executor of `sim`, or nullptr when it has another.
  static const SplitExecutor* of(const Simulation& sim) noexcept {
    return dynamic_cast<const SplitExecutor*>(&Executor::of(sim));
  }
  const Partition& partition() const noexcept { return *split_.partition; }
  /// The windows its runs took so far (each one exchange among the ranks).
  std::uint64_t windows() const noexcept { return windows_; }

  bool runs(NodeIndex n) const noexcept override { return split_.partition->rank_of[n] == split_.rank; }
  Simulator* elsewhere() noexcept override { return shadow_.get(); }
  unsigned parts() const noexcept override { return split_.partition->ranks; }
  void run_until(Tick t) override;
  Tick time() const noexcept override { return host_now_; }
  bool idle() const noexcept override { return idle_; }
  std::uint64_t events() const noexcept override { return engine_.events() + other_events_; }
  bool stop_outside_run() noexcept override;
  bool hold(const Error& e) override;
  void finished() override;
  void outside_handler(NodeIndex from) override;
  void send_away(const Link& link, Ref<Message> msg, std::uint32_t hop, Link::Shape shape, Tick start) override;
  void forward_away(const Link& link, const Flit& flit, Tick arrive) override;
  bool set_op_log(OpLog* log) override;
  void tie(std::uint32_t slot, NodeIndex from) override;
  void place_event(std::uint32_t priority) override;
  void gather_waiting(std::vector<std::pair<NodeIndex, std::string>>& mine) override;

 private:
  // What crosses (split_outbox.cpp).
  /// Start a record for the rank across `link`: what arrives at `at`, of kind `kind`.
  /// A message crossing sooner than its sender promised (the link's lookahead): SimError naming the sender.
  [[noreturn]] void broken_promise(const Link& link, Tick after) const;
  ByteWriter remote_record(const Link& link, Tick at, std::uint8_t kind);
  /// A message's bytes for another rank, with whose object it is, and the message they make here.
  void encode_crossing(const Message& msg, ByteWriter& w);
  Ref<Message> decode_crossing(ByteReader& r);
  /// Schedule what another rank sent this one.
  void receive(std::string_view bytes);

  /// Note that the event in engine slot `slot` was its scheduler's `count`-th.
  void tie_slot(std::uint32_t slot, std::uint64_t count) {
    if (slot >= ties_.size()) ties_.resize(std::max<std::size_t>(slot + 1, 2 * ties_.size()));
    ties_[slot] = count;
  }

  // Runs and their ends (split_executor.cpp).
  /// Every rank gets every node's statistics and link's traffic, and the op log's records up to `last` (those after
  /// it wait for a later run, which at the job's end never comes); returns the latest time any rank is at.
  Tick gather_statistics(const Place& last);
  std::string failure_bytes() const;
  /// SimError unless rank `rank`, which keeps an op log if `placing`, does as this one.
  void same_log(unsigned rank, bool placing) const;

  // The op log (split_log.cpp).
  /// The end of the bench's present stage (before any event of its next run), or of its run at `t`, as a Place.
  Place bench_end() const;
  Place run_end(Tick t) const;
  /// Where a record made now stands (OpLog::hold).
  Place place() const;
  /// Write this rank's records that a run settled at `last` (OpLog::settle), and go on to the next epoch.
  OpLog::Settled send_records(ByteWriter& w, const Place& last);
  /// The records a run settled on every rank (each rank's `readers`, after its statistics; this rank's in `mine`),
  /// merged in the order one process logs them, go to the op log's sinks.
  void merge_records(OpLog::Settled mine, std::vector<ByteReader>& readers);
  /// The loader of payloads named `name` (add_payload), found once; SimError naming the record `whose` if none.
  const OpPayloadType& payload_type(std::string_view name, const OpRecord& whose);
  void save_record(ByteWriter& w, const OpRecord& r);
  OpRecord load_record(ByteReader& r, unsigned rank);

  static constexpr std::uint32_t kNoHome = ~std::uint32_t{0};
  Simulation& sim_;
  Engine& engine_;
  Split split_;
  std::vector<std::string> outbox_;        ///< per rank: messages for it, as bytes (emptied once sent)
  Transport::Exchanged received_;          ///< the last window's exchange (its buffers kept for the next)
  Tick outbox_next_ = kNever;              ///< the earliest arrival in the outboxes
  std::uint64_t windows_ = 0;              ///< exchanges so far
  ExitCode failure_code_ = ExitCode::kOk;  ///< this rank's error (kOk: none)
  std::string failure_;
  bool failure_named_ = false;      ///< the failure's words name the rank it happened on (a RankError)
  std::uint64_t other_events_ = 0;  ///< events the other ranks ran (gathered after a run)
  /// Every node's statistics and every link's traffic as their ranks last said (gather_statistics sends what
  /// changed since).
  struct WireTraffic {
    std::uint64_t messages = 0;
    Load load;
    bool operator==(const WireTraffic&) const = default;
  };
  std::vector<Stat> agreed_stats_;
  std::vector<WireTraffic> agreed_wires_;
  bool gathered_ = false;  ///< whether a gather has been (the first sends everything)
  static constexpr std::uint32_t kNoMore = ~std::uint32_t{0};  ///< ends a gather's list of changes
  /// Bit for bit (a value's sign of zero counts, and a NaN equals itself).
  static bool same(const Stat& a, const Stat& b) noexcept {
    return a.count == b.count && std::bit_cast<std::uint64_t>(a.value) == std::bit_cast<std::uint64_t>(b.value);
  }
  RouteStore routes_;  ///< the routes of received messages
  /// Messages whose first flits came from another rank and whose last have not: by link and sender's address.
  std::map<std::pair<std::uint32_t, std::uintptr_t>, Ref<Message>> in_flight_;
  /// Requests that left this rank and will come back answered, by tag: the answer is loaded into the object.
  std::unordered_map<std::uint64_t, Ref<Message>> away_;
  std::uint64_t next_tag_ = 0;
  /// Requests that came from another rank, until they leave again: their home rank and its tag.
  struct Visitor {
    std::uint32_t home;
    std::uint64_t tag;
    Ref<Message> msg;
  };
  std::unordered_map<const Message*, Visitor> visitors_;
  Tick host_now_ = 0;        ///< the time the last run ended at, on every rank (now() outside handlers)
  bool idle_ = true;         ///< nothing was pending on any rank when the last run ended, and nobody scheduled since
  bool stop_asked_ = false;  ///< the bench asked for a stop outside a run (request_stop)
  bool may_act_ = true;      ///< the bench may act on this rank's components now (outside_handler)
  std::unique_ptr<Shadow> shadow_;  ///< the core as other ranks' components see it
  // The op log's (placing_: one is kept).
  OpLog* oplog_ = nullptr;
  bool placing_ = false;
  /// By engine slot: its event's scheduling node's count of the events it scheduled (0 for events the setup
  /// scheduled before the op log was set, whose roots are their own).
  std::vector<std::uint64_t> ties_;
  std::vector<std::uint64_t> scheduled_;  ///< per node: events it scheduled
  std::uint32_t epoch_ = 0;               ///< the bench's runs so far (Place::epoch)
  Place pos_;                             ///< the furthest event this rank ran (in this epoch, if it is this one's)
  std::map<std::string, const OpPayloadType*, std::less<>> payloads_;  ///< loaders found so far
};

/// What makes a system's executor this rank's part of `split`.
MakeExecutor split_executor(const Split& split);

/// `sim`'s executor, if it is a split one (nullptr otherwise).
const SplitExecutor* split_of(const Simulation& sim) noexcept;

}  // namespace kbsim::core
