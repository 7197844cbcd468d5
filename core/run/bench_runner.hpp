// Running one bench: the BenchContext a bench sees. Its parts live beside it:
// the systems it builds in the run's state (run/run_state.hpp), its sweeps in
// run/sweep.hpp, its output files in report/results_writer.hpp.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "component/simulation.hpp"
#include "kbsim/bench.hpp"
#include "kbsim/observer.hpp"
#include "run/run_state.hpp"
#include "run/sweep.hpp"

namespace kbsim::core {

class Registry;
class OpLog;

struct RunOptions {
  std::string bench;                ///< its name (the command line picks one when none is given)
  std::vector<std::string> params;  ///< "key=value"
  std::filesystem::path topology;
  /// The user chose the topology (--topology, or a --set of a topology value): a bench that reads none
  /// (BenchInfo::reads_topology false) refuses the run rather than ignore it.
  bool topology_given = false;
  /// The file of each configuration section plugins declare (kbsim/config_section.hpp), by name; a section not
  /// here is read with every value its default.
  std::map<std::string, std::filesystem::path> section_files;
  /// The sections whose file the user gave (--ccl FILE): read before the run, whether the bench reads them or not,
  /// so that their errors show. The others are read when first used.
  std::set<std::string> sections_given;
  std::vector<std::string> overrides;  ///< --set "key=value" (a section's among them)
  /// The run flags given (the observers declare them: --trace, --verify-data, ...), as typed.
  std::vector<RawParam> flags;
  /// This process writes the run's files (in an mpirun job, only one process does).
  bool writes_outputs = true;
  unsigned jobs = 0;  ///< worker processes for run_points (0: every core; 1 under mpirun)
  /// Under mpirun, how each system the bench builds is laid over the job's processes (--partition): "structure"
  /// (by SIP, then cube; node order for a graph without groups), "nodes" (node order), or "none" (every process runs
  /// the whole system).
  std::string partition = "structure";
  bool progress = false;  ///< a progress line for run_points on stderr
  /// A folder an earlier run of this bench wrote: its sweep points are read from its points.json, not simulated
  /// (the bench draws its figures again; `kbsim run --replot DIR`).
  std::filesystem::path replot;
};

class BenchRunner final : public BenchContext {
 public:
  /// `depth`: 0 for the run the user asked for, one more for each bench or sweep point run from it, which shares
  /// `cache` with it (RunCache).
  BenchRunner(const Registry& registry, RunOptions options, unsigned depth = 0,
              std::shared_ptr<RunCache> cache = nullptr);
  ~BenchRunner();

  /// Run the bench to completion and call finish() on every system it built.
  void run();
  /// Write results.json and topology.json into `dir` (created if needed).
  void write_results(const std::filesystem::path& dir) const;
  /// Lines for the printed summary on where the systems ran (none when they ran whole here).
  std::vector<std::string> placement_summary() const { return state_.placement().summary(state_.systems()); }

  // BenchContext
  const Params& params() const noexcept override { return params_; }
  const Graph& topology() override;
  System& build(const Graph& graph) override { return build_from(graph, nullptr).system(); }
  System& build(Graph&& graph) override { return build_from(graph, &graph).system(); }
  void release(System& system) override;
  Metrics& metrics() noexcept override { return metrics_; }
  const Section& section(std::string_view name) const override;
  void note(std::string_view line) override { notes_.emplace_back(line); }
  System& configured() override;
  const Params& flags() const noexcept override { return request_.flags; }
  const Metrics& run_bench(std::string_view name, const std::vector<std::string>& params,
                           const std::vector<std::string>& overrides) override;
  std::vector<PointResult> run_points(const std::vector<SweepPoint>& points) override;
  void write_file(std::string_view name, std::string content) override;

  // Figures for the summary
  Tick sim_time() const { return state_.sim_time(); }
  std::uint64_t events() const { return state_.events(); }
  double wall_s() const noexcept { return wall_s_; }
  double build_wall_s() const noexcept { return state_.build_wall_s(); }
  /// The run was stopped from outside (Ctrl-C, SIGTERM, --max-wall): its results are those reached.
  bool interrupted() const noexcept { return interrupted_; }
  const std::vector<std::string>& notes() const noexcept { return notes_; }
  const std::vector<std::unique_ptr<Simulation>>& systems() const noexcept { return state_.systems(); }
  /// The graph of every system built, in order (systems of equal graphs share one).
  const std::vector<std::shared_ptr<const Graph>>& graphs() const noexcept { return state_.graphs(); }
  /// The graph the summary names: the first built, else the loaded topology.
  const Graph& shown_graph();
  /// Points run through run_points (in their order, gathered from every process of the job).
  std::size_t points() const noexcept { return points_.size(); }
  std::size_t failed_points() const noexcept { return failed_count(points_); }
  /// What the observers wrote, a line each, for the printed summary.
  std::vector<std::string> written() const;

 private:
  /// build(): reuse the elaboration of an equal graph built before, else elaborate `graph` (taken from
  /// `movable` when given).
  Simulation& build_from(const Graph& graph, Graph* movable);
  /// The loaded --topology graph (with --set), loaded on first use.
  const Graph& loaded_topology();
  /// PluginError unless the bench declares that it reads the topology (`call` is what it called).
  void require_reads_topology(const char* call) const;
  /// run() in this process alone.
  void run_here();
  /// BenchError unless what the observers taking part ask for (data operations) is there.
  void check_observed() const;
  /// Take every declared configuration section's --set overrides out of options_.overrides, and read the sections
  /// the user configured (a file given or an override: their errors come before the run); the others (defaults,
  /// or the file beside the topology) are read when the bench first asks for them, so a run that uses none loads
  /// none of the plugins their entries come from (a Python plugin file's CCL algorithm would start an interpreter).
  void read_sections();
  struct SectionSource {
    const SectionInfo* info;
    std::filesystem::path file;
    std::vector<std::string> overrides;
  };
  /// Read every section that has a file, before nested runs that would each meet its errors (as their own).
  void loaded_section_files() const;
  /// Section `name`, read from `src` the first time it is asked for.
  const Section& loaded_section(const std::string& name, const SectionSource& src) const;
  /// Resolve the run flags against the observers' declarations; ask each observer whether it takes part.
  void start_observers();
  PointRecord run_point(const SweepPoint& p, const std::string& who);
  /// The options of a bench this one runs (run_bench, a sweep point): same topology and section files, this run's
  /// --set followed by `overrides`, one process, no flags.
  RunOptions nested_options(std::string bench, const std::vector<std::string>& params,
                            const std::vector<std::string>& overrides) const;
  const Registry& registry_;
  RunOptions options_;                      ///< its overrides: the topology's only
  std::vector<std::string> all_overrides_;  ///< every --set, as given
  std::map<std::string, SectionSource, std::less<>> section_sources_;
  mutable std::map<std::string, Section, std::less<>> sections_;  ///< read so far
  mutable std::set<std::string, std::less<>> sections_read_;      ///< by the bench: recorded in results.json
  const BenchType* type_;
  unsigned depth_;  ///< how deep in run_bench and run_points calls this runner is
  Params params_;
  RunRequest request_;
  // Declared before the systems, so destroyed after them: an observer may have offered a service to one.
  std::vector<std::unique_ptr<RunObserver>> observers_;  ///< those taking part, in name order
  std::vector<const ObserverInfo*> observer_infos_;      ///< theirs, in the same order
  std::unique_ptr<OpLog> op_log_;
  std::shared_ptr<const Graph> topology_;  ///< loaded on first use; the configured system shares it
  RunState state_;
  std::vector<std::unique_ptr<Metrics>> nested_metrics_;    ///< of the benches this one ran (run_bench)
  std::vector<PointRecord> points_;                         ///< every run_points point, in order
  std::vector<std::pair<std::string, std::string>> files_;  ///< write_file: name, content
  bool interrupted_ = false;
  Metrics metrics_;
  std::vector<std::string> notes_;
  double wall_s_ = 0.0;
  Simulation* configured_ = nullptr;
};

}  // namespace kbsim::core
