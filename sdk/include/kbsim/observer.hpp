// Run observers: plugins that watch a `kbsim run` from the side. For every
// run the core asks each registered observer type whether it takes part
// (create returns nullptr if not); those that do are attached to the
// configured system (BenchContext::configured), receive every completed
// data-operation record, may offer services on that system (the data pass
// does), add notes and sections to results.json, and commit their own output
// files once the results are written. The Chrome trace, the op-log file and
// the data pass are observers.
//
// An observer declares the flags of `kbsim run` that ask for it (ObserverInfo::
// flags: `--trace FILE`, `--verify-data`); the core adds them to the command
// line, resolves them like parameters and hands every observer the run's
// flags (RunRequest), and a bench reads them with BenchContext::flags().
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kbsim/bench.hpp"
#include "kbsim/metrics.hpp"
#include "kbsim/op_record.hpp"

namespace kbsim {

/// What the user asked of this run.
struct RunRequest {
  std::string bench;
  Params flags;  ///< every declared flag: as given, or its default
  /// This process writes the run's files. In a job of several processes (mpirun) every process runs the bench and
  /// its observers alike, so that what they record is the same, but only one writes.
  bool writes_outputs = true;
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
  /// A line of the run's printed summary naming what commit() wrote ("trace      FILE"), or "".
  virtual std::string written() const { return {}; }
};

/// A flag of `kbsim run` an observer declares: `--NAME` for a bool, `--NAME VALUE` otherwise.
struct RunFlag {
  ParamSpec spec;
  std::string value_name = "VALUE";  ///< in --help: "FILE", "N"
};

struct ObserverInfo {
  std::string name;
  std::string summary;
  std::vector<RunFlag> flags = {};
  /// Its flags carry to the points of a sweep, which it observes in their own runs (the data pass verifies each
  /// point): a bench that only sweeps satisfies it. Otherwise it needs the configured system.
  bool observes_points = false;
};

struct ObserverType {
  ObserverInfo info;
  /// An observer for this run, or nullptr if it does not take part. A bad
  /// request (e.g. an unwritable --trace path) throws UsageError before the run.
  RunObserver* (*create)(const RunRequest& request);
};

}  // namespace kbsim
