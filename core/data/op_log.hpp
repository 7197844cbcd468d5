// The op log (ADR-0052): records of the data operations components serviced
// in the timing pass. The simulation calls start / restart / end around a
// component's service of a message that declares itself a data operation;
// the log asks the message to describe itself. Completed records go to the
// sinks (e.g. a trace, as a stream) and, when kept, to the data pass.
#pragma once

#include <functional>
#include <unordered_map>
#include <vector>

#include "kbsim/data_pass.hpp"
#include "kbsim/message.hpp"

namespace kbsim::core {

class OpLog {
 public:
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

  /// A record pushed directly, not around a service (ADR-0052's record_copy
  /// path), e.g. a host write. Its seq is assigned here.
  void record(OpRecord r);

  /// Kept records in completion order (seq order).
  const std::vector<OpRecord>& records() const noexcept { return records_; }
  /// Kept records in stable t_start order (ADR-0052 D2).
  std::vector<const OpRecord*> by_start() const;
  /// The earliest start of a record still open, or kNever: every record
  /// starting before it is complete.
  Tick watermark() const noexcept;
  std::size_t open() const noexcept { return pending_.size(); }
  std::uint64_t count() const noexcept { return seq_; }

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
  bool keep_;
  std::uint64_t seq_ = 0;
  std::unordered_map<Key, OpRecord, KeyHash> pending_;
  std::vector<OpRecord> records_;
  std::vector<Sink> sinks_;
};

}  // namespace kbsim::core
