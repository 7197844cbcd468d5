// Run observers: plugins that watch a `kbsim run` from the side. For every
// run the core asks each registered observer type whether it takes part
// (create returns nullptr if not); those that do are attached to the
// configured system (BenchContext::configured), receive every completed
// data-operation record, may offer services on that system (the data pass
// does), add notes and sections to results.json, and commit their own output
// files once the results are written. The Chrome trace and the data pass are
// observers.
#pragma once

#include <filesystem>
#include <string>

#include "kbsim/bench.hpp"
#include "kbsim/metrics.hpp"
#include "kbsim/op_record.hpp"

namespace kbsim {

/// What the user asked of this run.
struct RunRequest {
  std::string bench;
  bool verify_data = false;      ///< --verify-data
  std::filesystem::path trace;   ///< --trace FILE (empty = none)
  std::filesystem::path op_log;  ///< --op-log FILE (written by the core; empty = none)
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  /// Whether the op log must keep every record in memory (OpLogView::records()).
  virtual bool keeps_records() const noexcept { return false; }
  /// The configured system was built and its op log is on.
  virtual void attach(System& system, OpLogView& log) {
    (void)system;
    (void)log;
  }
  /// A completed record (completion order).
  virtual void on_record(const OpRecord& r) { (void)r; }
  /// The bench returned and the services finished; the components have not.
  virtual void finish(BenchContext& ctx) { (void)ctx; }
  /// Add this observer's sections to results.json (top level, after "op_log").
  virtual void write_results(Metrics& results) const { (void)results; }
  /// results.json is written: put this observer's own files in place.
  virtual void commit() {}
};

struct ObserverInfo {
  std::string name;
  std::string summary;
};

struct ObserverType {
  ObserverInfo info;
  /// An observer for this run, or nullptr if it does not take part. A bad
  /// request (e.g. an unwritable --trace path) throws UsageError before the run.
  RunObserver* (*create)(const RunRequest& request);
};

}  // namespace kbsim
