#include "cli/run_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

#include "cli/run_watch.hpp"
#include "cluster/world.hpp"
#include "kbsim/text.hpp"
#include "plugin/registry.hpp"
#include "topology/section_config.hpp"

namespace fs = std::filesystem;

namespace kbsim::cli {

namespace {

/// The --out folder, made before simulating (usage error if it cannot be); removed again if the run fails
/// and leaves it empty.
class OutDir {
 public:
  explicit OutDir(const fs::path& dir) {
    std::error_code ec;
    auto refuse = [&](const std::string& why) { throw UsageError("--out " + dir.string() + ": " + why); };
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) refuse("exists and is not a directory");
    fs::path start = fs::absolute(dir, ec).lexically_normal();
    if (!start.has_filename()) start = start.parent_path();  // "out/" names the folder "out"
    for (fs::path at = start; !at.empty() && !fs::exists(at, ec); at = at.parent_path()) {
      made_.push_back(at);  // deepest first
      if (at == at.parent_path()) break;
    }
    fs::create_directories(dir, ec);
    if (ec) refuse("cannot create it (" + ec.message() + ")");
    if (::access(dir.c_str(), W_OK | X_OK) != 0) refuse("not writable");
  }
  ~OutDir() {
    std::error_code ec;
    if (kept_) return;
    for (const fs::path& d : made_)
      if (!fs::is_empty(d, ec) || !fs::remove(d, ec)) break;
  }
  void keep() { kept_ = true; }

 private:
  std::vector<fs::path> made_;  ///< the folders this run created, deepest first
  bool kept_ = false;
};

template <class Add>
void declare(const std::string& library, const char* what, const std::string& name, Add add) {
  try {
    add();
  } catch (const CLI::ConstructionError& e) {
    throw PluginError(library + ": " + what + " '" + name + "' cannot declare its option of kbsim run: " + e.what());
  }
}
}  // namespace

void PluginRunOptions::add(CLI::App* run, const core::Registry& reg) {
  for (const auto& [section, entry] : reg.sections()) {
    const std::string& name = section;
    const std::string doc =
        entry.type->summary + " (default: " + name + ".yaml); --set " + name + ".KEY=VALUE overrides its values";
    Value& v = sections_.emplace_back(Value{name, {}, false});
    declare(entry.from.path, "configuration section", name,
            [&] { run->add_option("--" + name, v.text, doc)->type_name("FILE"); });
  }
  for (const auto& [name, entry] : reg.observers())
    for (const RunFlag& f : entry.type->info.flags) {
      Value& v = flags_.emplace_back(Value{f.spec.name, {}, false});
      v.spec = &f.spec;
      declare(entry.from.path, "run observer", name, [&] {
        if (f.spec.type == ParamType::kBool)
          run->add_flag_function(
              "--" + f.spec.name, [&v](std::int64_t n) { v.on = n > 0; }, f.spec.doc);
        else
          run->add_option("--" + f.spec.name, v.text, f.spec.doc)->type_name(f.value_name);
      });
    }
  run_ = run;
}

void PluginRunOptions::apply(core::RunOptions& opts, const fs::path& data) const {
  for (const Value& s : sections_) {
    std::error_code ec;
    if (run_->count("--" + s.name)) {
      opts.section_files[s.name] = s.text;
      opts.sections_given.insert(s.name);
    } else if (fs::exists(data / (s.name + ".yaml"), ec))
      opts.section_files[s.name] = data / (s.name + ".yaml");
  }
  for (const Value& f : flags_)
    if (run_->count("--" + f.name)) opts.flags.push_back(given_option(*f.spec, f.text, f.on));
}

RunCommand::RunCommand(CLI::App& app, Common& common)
    : app_(app.add_subcommand("run", "run a bench and write results.json")), common_(common) {
  add_common(app_, common_);
  app_->add_option("--bench", opts_.bench,
                   "bench to run: a name, or its number in 'kbsim list benches'; default: system (runs the topology as "
                   "it is) when "
                   "--topology or a topology --set is given, else message-mesh (builds its own torus)")
      ->type_name("NAME");
  app_->add_option("--param", opts_.params, "a bench parameter (repeatable)")->type_name("KEY=VALUE");
  app_->add_option("--out", out_, "directory for results.json and topology.json")->capture_default_str();
  app_->add_option("-j,--jobs", opts_.jobs,
                   "worker processes for a bench's sweep points (default: every core; under mpirun: 1 per process)")
      ->type_name("N")
      ->check(CLI::Range(1u, 4096u));
  app_->add_option("--partition", opts_.partition,
                   "under mpirun, how a system is laid over the job's processes: structure (by SIP, then cube; node "
                   "order for a graph without groups), nodes (node order), or none (every process runs all of it)")
      ->type_name("METHOD")
      ->check(CLI::IsMember({"structure", "nodes", "none"}));
  app_->add_option("--replot", opts_.replot,
                   "draw a sweep's figures and tables again from the folder DIR an earlier run of the same bench, "
                   "parameters and --set wrote (its points.json), without simulating its points")
      ->type_name("DIR");
  app_->add_option("--max-wall", max_wall_s_,
                   "stop after this many seconds of wall time and write the results so far, marked interrupted "
                   "(as Ctrl-C does; exit 8)")
      ->type_name("SECONDS")
      ->check(CLI::NonNegativeNumber);
}

int RunCommand::run(const core::Registry& reg) {
  const bool bench_given = app_->count("--bench") > 0;
  // Under mpirun every process runs the bench (its sweep points are shared out); the first writes and reports.
  const bool writer = core::cluster::leads();
  opts_.writes_outputs = writer;
  std::optional<OutDir> out_dir;
  if (writer) out_dir.emplace(out_);
  opts_.progress = ::isatty(STDERR_FILENO) != 0;
  opts_.topology = topology_file(common_);
  // What the user chose: a topology file, or a value of the default one. With no --bench, such a topology is run
  // as it is (the system bench); a bench that builds its own system refuses it (BenchInfo::reads_topology).
  opts_.topology_given =
      !common_.topology.empty() || !std::all_of(common_.sets.begin(), common_.sets.end(),
                                                [&](const std::string& s) { return core::addresses_section(s, reg); });
  if (bench_given) {
    opts_.bench = reg.resolve_bench(opts_.bench);  // a name, or its number in kbsim list benches
  } else {
    opts_.bench = opts_.topology_given ? "system" : "message-mesh";
  }
  opts_.overrides = common_.sets;
  plugin_options_.apply(opts_, data_dir());
  core::BenchRunner runner(reg, opts_);
  RunWatch watch(max_wall_s_);
  try {
    runner.run();
  } catch (const BenchError&) {
    // A bench that failed its own checks has usually said why, line by line: show that (nothing is written).
    if (writer && !runner.notes().empty())
      std::printf("kbsim %s: bench %s failed\n", KBSIM_VERSION, opts_.bench.c_str());
    if (writer)
      for (const auto& line : runner.notes()) std::printf("  %s\n", line.c_str());
    throw;
  }
  if (!writer) return runner.interrupted() ? static_cast<int>(ExitCode::kInterrupted) : 0;
  runner.write_results(out_);
  out_dir->keep();

  return report(runner);
}

int RunCommand::report(core::BenchRunner& runner) const {
  const auto& g = runner.shown_graph();
  std::size_t nodes = runner.graphs().empty() ? g.nodes.size() : 0;
  for (const auto& gr : runner.graphs()) nodes += gr->nodes.size();
  double eps = runner.wall_s() > 0 ? static_cast<double>(runner.events()) / runner.wall_s() : 0.0;
  std::printf("kbsim %s: bench %s on %s (%zu nodes)\n", KBSIM_VERSION, opts_.bench.c_str(), g.source.c_str(), nodes);
  std::printf("  sim time   %s ns\n", format_ns(ticks_to_ns(runner.sim_time())).c_str());
  std::printf("  events     %llu in %.3f s wall, %.2f M events/s (build %.3f s)\n",
              static_cast<unsigned long long>(runner.events()), runner.wall_s(), eps / 1e6, runner.build_wall_s());
  for (const auto& line : runner.placement_summary()) std::printf("  %s\n", line.c_str());
  if (runner.points()) {
    std::printf("  points     %zu run%s, %zu failed (points.json)\n", runner.points(),
                core::cluster::over_the_job().c_str(), runner.failed_points());
  }
  for (const auto& line : runner.notes()) std::printf("  %s\n", line.c_str());
  std::printf("  results    %s\n", (fs::path(out_) / "results.json").c_str());
  for (const auto& line : runner.written()) std::printf("  %s\n", line.c_str());
  if (runner.interrupted()) {
    std::fprintf(stderr,
                 "kbsim: error: INTERRUPTED: bench %s stopped by %s at sim time %s ns; the results so far are "
                 "in %s, marked interrupted\n",
                 opts_.bench.c_str(), RunWatch::reason(), format_ns(ticks_to_ns(runner.sim_time())).c_str(),
                 (fs::path(out_) / "results.json").c_str());
    return static_cast<int>(ExitCode::kInterrupted);
  }
  if (runner.failed_points()) {
    std::fprintf(stderr,
                 "kbsim: error: POINTS_FAILED: %zu of %zu points of bench %s failed (their errors are in %s); the "
                 "other points' results are written\n",
                 runner.failed_points(), runner.points(), opts_.bench.c_str(),
                 (fs::path(out_) / "points.json").c_str());
    return static_cast<int>(ExitCode::kBench);
  }
  return 0;
}

}  // namespace kbsim::cli
