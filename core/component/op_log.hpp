// The op log: records of the data operations components serviced (see
// kbsim/op_record.hpp). The simulation calls start / restart / end around a
// component's service of a message that declares itself a data operation;
// the log asks the message to describe itself. Completed records go to the
// sinks (the run's observers, as a stream) and, when kept, stay in memory.
//
// When a system runs in parts (an executor of several processes), each part logs its own components'
// records. The log then holds them with their Place, and at the end of each of the bench's runs the parts merge what
// the run settled into the order one process logs them in (docs/scale-out.md, on the op log of a run in parts); every
// part's sinks get the merged records.
#pragma once

#include <compare>
#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "kbsim/message.hpp"
#include "kbsim/op_record.hpp"

namespace kbsim::core {

/// Where a record was made, in an order that one process and every division of the system agree on: the bench's run
/// (epoch), then whether the bench (or a setup) made it before that run's events (stage 0) or a handler did (stage
/// 1), then, for a handler's, the largest order key of the events its part had run at that time so far (the order
/// of simultaneous events, docs/architecture.md, with the scheduling node's count of its events as the last tie).
struct Place {
  std::uint32_t epoch = 0;
  std::uint8_t stage = 0;
  Tick time = 0;
  std::uint32_t priority = 0, root = 0;
  std::uint64_t lane = 0, tie = 0;
  auto operator<=>(const Place&) const = default;
};

/// A place as bytes, field by field (no padding on the wire).
void put_place(ByteWriter& w, const Place& p);
Place get_place(ByteReader& r);

class OpLog final : public OpLogView {
 public:
  /// Where a record's service started, and restarted (op_resume): the place and the time of each.
  struct Start {
    Place place;
    Tick t;
  };
  /// A record waiting for the end of a run: where it was made, and where it started.
  struct Held {
    Place place;
    std::vector<Start> starts;
    OpRecord record;
  };
  /// What the end of a run settles in this part (settle).
  struct Settled {
    std::vector<Held> records;  ///< in the order they were made
    Tick watermark = kNever;    ///< the earliest start of a record open at the end
    std::uint64_t open = 0;     ///< records open at the end
  };

  using Sink = std::function<void(const OpRecord&)>;

  /// `keep`: hold every record for the data pass and op-log dumps (otherwise
  /// records only pass through the sinks, and memory stays bounded).
  explicit OpLog(bool keep) : keep_(keep) {}

  void add_sink(Sink s) { sinks_.push_back(std::move(s)); }
  bool keeps() const noexcept { return keep_; }

  // --- hooks of the simulation ---
  /// `node` (whose id is `id`) begins servicing `msg`.
  void start(NodeIndex node, std::string_view id, const Message& msg, Tick now);
  /// `node` got a shared resource it asked for with `msg`: its service starts now.
  void restart(NodeIndex node, const Message& msg, Tick now);
  /// `node` hands `msg` on at `at`: its service ends.
  void end(NodeIndex node, const Message& msg, Tick at);

  // OpLogView
  void record(OpRecord r) override;
  const std::vector<OpRecord>& records() const noexcept override { return records_; }
  std::vector<const OpRecord*> by_start() const override;
  Tick watermark() const noexcept override;

  std::size_t open() const noexcept { return held() ? merged_open_ : pending_.size(); }
  std::uint64_t count() const noexcept { return seq_; }

  // --- a system run in parts ---
  /// Hold the records handlers make (end, record) with the place `where` gives (stage 1), instead of passing them
  /// on; what the bench records outside any handler (stage 0: alike in every part) still passes on at once.
  void hold(std::function<Place()> where) { where_ = std::move(where); }
  /// The end of a run at `last`: records placed after it (in a part that ran past the stop that ended the run) go
  /// to the next epoch (at the job's end, one process never makes them: they stay held); the others are returned, with
  /// the records open at `last` as one process has them (started up to it, not ended up to it; a record restarted past
  /// it counts from its start before).
  Settled settle(const Place& last, std::uint32_t next_epoch);
  /// Pass a merged record on (its seq is assigned here), as a log of one process passes on what it logs.
  void emit(OpRecord r);
  /// The whole system's open records after the last merge: how many, and the earliest start among them.
  void set_merged_open(std::uint64_t open, Tick watermark) noexcept {
    merged_open_ = open;
    merged_watermark_ = watermark;
  }
  /// A kind's name as storage that outlives the run (OpRecord::kind), for records made in another part.
  std::string_view intern(std::string_view kind) { return *kinds_.emplace(kind).first; }

 private:
  struct Key {
    const Message* msg;
    NodeIndex node;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      return std::hash<const void*>()(k.msg) ^ (std::size_t{k.node} * 0x9e3779b97f4a7c15ULL);
    }
  };
  struct Open {
    OpRecord record;
    std::vector<Start> starts;  ///< (held() only)
  };
  bool keep_;
  std::uint64_t seq_ = 0;
  std::unordered_map<Key, Open, KeyHash> pending_;
  std::vector<OpRecord> records_;
  std::vector<Sink> sinks_;
  // A system run in parts (hold).
  std::function<Place()> where_;  ///< set: records are held
  bool held() const noexcept { return static_cast<bool>(where_); }
  std::vector<Held> holding_;
  std::uint64_t merged_open_ = 0;
  Tick merged_watermark_ = kNever;
  std::set<std::string, std::less<>> kinds_;
};

}  // namespace kbsim::core
