// The op log: records of the data operations components serviced (see
// kbsim/op_record.hpp). The simulation calls start / restart / end around a
// component's service of a message that declares itself a data operation;
// the log asks the message to describe itself. Completed records go to the
// sinks (the run's observers, as a stream) and, when kept, stay in memory.
#pragma once

#include <functional>
#include <unordered_map>
#include <vector>

#include "kbsim/message.hpp"
#include "kbsim/op_record.hpp"

namespace kbsim::core {

class OpLog final : public OpLogView {
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

  // OpLogView
  void record(OpRecord r) override;
  const std::vector<OpRecord>& records() const noexcept override { return records_; }
  std::vector<const OpRecord*> by_start() const override;
  Tick watermark() const noexcept override;

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
