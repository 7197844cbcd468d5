// The data pass (ADR-0020 D6): replays the op log's records in t_start order
// (ties: memory before gemm before math, then completion order) against the
// versioned DataStore, computing GEMMs and math ops with Eigen. It runs
// incrementally: each flush executes the records no open record can precede.
// Within one start time, GEMMs with identical signatures and no address
// conflict (RAW, WAR, WAW) with each other run as one batch.
#pragma once

#include <unordered_map>
#include <vector>

#include "data/data_store.hpp"
#include "data/op_log.hpp"

namespace kbsim::core {

class Simulation;

class DataExecutor {
 public:
  DataExecutor(OpLog& log, Simulation& sim) : log_(log), sim_(sim) {}

  /// Execute every kept record that starts before the log's watermark (every one when `all`).
  /// Throws SimError naming the record when an op cannot be computed.
  void flush(bool all = false);

  /// A host write (pushed directly into the log, ADR-0052's record_copy path):
  /// `bytes` at physical address `pa`, visible from `t_start` on.
  void host_write(std::string_view node, std::uint64_t pa, BytesPtr bytes, Tick t_start, Tick t_end);

  /// HBM bytes at `pa` as of `t`, after what has been executed so far.
  BytesPtr read_hbm(std::uint64_t pa, std::uint64_t nbytes, Tick t) const {
    return store_.read(tl::Space::kHbm, pa, nbytes, t);
  }
  const data::DataStore& store() const noexcept { return store_; }

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
  void run_group(std::vector<const OpRecord*>& group);
  void run_batch(std::vector<const OpRecord*>& batch);
  void execute(const OpRecord& r);
  /// The record's inputs, each as of the record's end (or its own as_of).
  std::vector<data::Value> inputs(const OpRecord& r) const;
  void compute(const OpRecord& r, const std::vector<data::Value>& in);
  data::Value resolve(const OpTensor& t, Tick reader) const;
  void write(const OpRecord& r, const data::Value& v);
  const DataCompute* custom(const DataOp& op);

  OpLog& log_;
  Simulation& sim_;
  data::DataStore store_;
  std::vector<bool> done_;      ///< parallel to log_.records()
  std::size_t first_open_ = 0;  ///< records before it are all executed
  std::unordered_map<NodeIndex, const DataCompute*> engines_;
  Stats stats_;
};

}  // namespace kbsim::core
