// The data pass: replays the op log's records in t_start order
// (ties: memory before gemm before math, then completion order) against the
// versioned DataStore, computing GEMMs and math ops with Eigen. It runs
// incrementally: each flush executes the records no open record can precede.
// Within one start time, GEMMs with identical signatures and no address
// conflict (RAW, WAR, WAW) with each other run as one batch.
#pragma once

#include <unordered_map>
#include <vector>

#include "data_store.hpp"
#include "kbsim/bench.hpp"
#include "kbsim/op_record.hpp"
#include "kbsim/pe/data_op.hpp"

namespace kbsim::data_pass {

/// The data pass of one system: a DataPass service (kbsim/pe/data_op.hpp).
class DataExecutor final : public DataPass {
 public:
  DataExecutor(OpLogView& log, System& sys) : log_(log), sys_(sys) {}

  /// Execute every kept record that starts before the log's watermark.
  /// Throws SimError naming the record when an op cannot be computed.
  void flush() override { run(false); }
  /// Execute every kept record (at the end of the run).
  void flush_all() { run(true); }

  /// A host write (pushed directly into the log, not around a service):
  /// `bytes` at physical address `pa`, visible from `t_start` on.
  void host_write(std::string_view node, std::uint64_t pa, BytesPtr bytes, Tick t_start, Tick t_end) override;

  /// HBM bytes at `pa` as of `t`, after what has been executed so far.
  BytesPtr read_hbm(std::uint64_t pa, std::uint64_t nbytes, Tick t) const override {
    return store_.read(tl::Space::kHbm, pa, nbytes, t);
  }
  const DataStore& store() const noexcept { return store_; }

  struct Stats {
    std::uint64_t executed = 0;  ///< records computed (copies, GEMMs, math)
    std::uint64_t skipped = 0;   ///< records with nothing to compute (timeline only, loads)
    std::uint64_t gemms = 0, maths = 0, copies = 0;
    std::uint64_t batches = 0, batched = 0;  ///< GEMM batches of more than one op, and the ops in them
    std::uint64_t shared_b = 0;              ///< batched GEMMs that shared one decoded B (gemm_stacked)
    double wall_s = 0;
  };
  const Stats& stats() const noexcept { return stats_; }

 private:
  void run(bool all);
  void run_group(std::vector<const OpRecord*>& group);
  void run_batch(std::vector<const OpRecord*>& batch);
  void execute(const OpRecord& r);
  /// The record's inputs, each as of the record's end (or its own as_of).
  std::vector<Value> inputs(const OpRecord& r) const;
  void compute(const OpRecord& r, const std::vector<Value>& in);
  Value resolve(const OpTensor& t, Tick reader) const;
  void write(const OpRecord& r, const Value& v);
  const DataCompute* custom(const DataOp& op);

  OpLogView& log_;
  System& sys_;
  DataStore store_;
  std::vector<bool> done_;      ///< parallel to log_.records()
  std::size_t first_open_ = 0;  ///< records before it are all executed
  std::unordered_map<NodeIndex, const DataCompute*> engines_;
  Stats stats_;
};

}  // namespace kbsim::data_pass
