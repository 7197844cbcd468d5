#include "cli/commands.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <optional>

#include "cli/describe.hpp"
#include "cli/run_watch.hpp"
#include "cluster/world.hpp"
#include "component/simulation.hpp"
#include "kbsim/text.hpp"
#include "plugin/params_resolve.hpp"
#include "plugin/registry.hpp"
#include "report/json.hpp"
#include "run/bench_runner.hpp"
#include "run/command_runner.hpp"
#include "split/job_placement.hpp"
#include "topology/section_config.hpp"
#include "topology/topology.hpp"

namespace fs = std::filesystem;

namespace kbsim::cli {

namespace {

struct Common {
  std::vector<std::string> plugins;
  std::vector<std::string> components;
  std::string topology;
  std::vector<std::string> sets;
  std::string log_level = "warn";
};

fs::path exe_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

/// Where the default components.yaml and topology.yaml live: the install's
/// share/kbsim, else the source tree this binary was built from.
fs::path data_dir() {
  fs::path installed = exe_dir() / ".." / "share" / "kbsim";
  if (fs::exists(installed / "components.yaml")) return installed;
  return KBSIM_SOURCE_DIR;
}

fs::path default_plugin_dir() {
  fs::path build = exe_dir() / ".." / "plugins";
  if (fs::is_directory(build)) return build;
  return exe_dir() / ".." / "lib" / "kbsim" / "plugins";
}

void add_common(CLI::App* app, Common& c) {
  app->add_option("--plugins", c.plugins, "plugin directory, searched first (repeatable)")->type_name("DIR");
  app->add_option("--components", c.components,
                  "extra components.yaml; its entries add to and override the default (repeatable)")
      ->type_name("FILE");
  app->add_option("--topology", c.topology,
                  "topology file (default: topology.yaml); every bench runs on it but those 'kbsim list benches' "
                  "marks (own system), which refuse it")
      ->type_name("FILE");
  app->add_option("--set", c.sets,
                  "override a topology value by dotted path, e.g. nodes.sw0.impl=custom.store_forward "
                  "(SECTION.KEY=VALUE: a value of a configuration section, 'kbsim list sections')")
      ->type_name("KEY=VALUE");
  app->add_option("--log-level", c.log_level, "debug, info, warn or error")
      ->check(CLI::IsMember({"debug", "info", "warn", "error"}));
}

std::unique_ptr<core::Registry> make_registry(const Common& c) {
  spdlog::set_level(spdlog::level::from_str(c.log_level));
  auto reg = std::make_unique<core::Registry>();
  for (const auto& d : c.plugins) reg->add_search_dir(d, true);
  if (const char* env = std::getenv("KBSIM_PLUGIN_PATH")) {
    std::string path = env;
    for (std::size_t start = 0; start <= path.size();) {
      auto colon = path.find(':', start);
      std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!dir.empty()) reg->add_search_dir(dir, false);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  reg->add_search_dir(default_plugin_dir(), false);
  reg->discover();
  reg->load_components_file(data_dir() / "components.yaml");
  for (const auto& f : c.components) reg->load_components_file(f);
  return reg;
}

fs::path topology_file(const Common& c) {
  return c.topology.empty() ? data_dir() / "topology.yaml" : fs::path(c.topology);
}

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

/// What plugins add to `kbsim run`: an option per configuration section (--NAME FILE) and the observers' flags.
class PluginRunOptions {
 public:
  void add(CLI::App* run, const core::Registry& reg) {
    for (const auto& [name, entry] : reg.sections()) {
      Value& v = sections_.emplace_back(Value{name, {}, false});
      declare(entry.from.path, "configuration section", name, [&] {
        run->add_option(
               "--" + name, v.text,
               entry.type->summary + " (default: " + name + ".yaml); --set " + name + ".KEY=VALUE overrides its values")
            ->type_name("FILE");
      });
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

  /// Into the run's options: the sections' files (given, or NAME.yaml in `data`) and the flags given.
  void apply(core::RunOptions& opts, const fs::path& data) const {
    for (const Value& s : sections_) {
      std::error_code ec;
      if (run_->count("--" + s.name))
        opts.section_files[s.name] = s.text;
      else if (fs::exists(data / (s.name + ".yaml"), ec))
        opts.section_files[s.name] = data / (s.name + ".yaml");
    }
    for (const Value& f : flags_) {
      if (run_->count("--" + f.name) == 0) continue;
      const std::string origin = "--" + f.name;
      if (f.spec->type == ParamType::kBool)
        opts.flags.push_back({f.name, ParamValue{f.on}, origin});
      else if (f.spec->type == ParamType::kString || f.spec->type == ParamType::kNode)
        opts.flags.push_back({f.name, ParamValue{f.text}, origin + " " + f.text});
      else
        opts.flags.push_back({f.name, parse_scalar(f.text), origin + " " + f.text});
    }
  }

 private:
  struct Value {
    std::string name;
    std::string text;
    bool on = false;
    const ParamSpec* spec = nullptr;
  };
  template <class Add>
  static void declare(const std::string& library, const char* what, const std::string& name, Add add) {
    try {
      add();
    } catch (const CLI::ConstructionError& e) {
      throw PluginError(library + ": " + what + " '" + name + "' cannot declare its option of kbsim run: " + e.what());
    }
  }
  std::deque<Value> sections_, flags_;
  CLI::App* run_ = nullptr;
};

int cmd_run(const Common& c, const core::Registry& reg, core::RunOptions opts, bool bench_given, const std::string& out,
            double max_wall_s) {
  // Under mpirun every process runs the bench (its sweep points are shared out); the first writes and reports.
  const bool writer = core::cluster::leads();
  opts.writes_outputs = writer;
  std::optional<OutDir> out_dir;
  if (writer) out_dir.emplace(out);
  opts.progress = ::isatty(STDERR_FILENO) != 0;
  opts.topology = topology_file(c);
  // What the user chose: a topology file, or a value of the default one. With no --bench, such a topology is run
  // as it is (the system bench); a bench that builds its own system refuses it (BenchInfo::reads_topology).
  opts.topology_given = !c.topology.empty() || !std::all_of(c.sets.begin(), c.sets.end(), [&](const std::string& s) {
    return core::addresses_section(s, reg);
  });
  if (bench_given) {
    opts.bench = reg.resolve_bench(opts.bench);  // a name, or its number in kbsim list benches
  } else {
    opts.bench = opts.topology_given ? "system" : "message-mesh";
  }
  opts.overrides = c.sets;
  core::BenchRunner runner(reg, opts);
  RunWatch watch(max_wall_s);
  try {
    runner.run();
  } catch (const BenchError&) {
    // A bench that failed its own checks has usually said why, line by line: show that (nothing is written).
    if (writer && !runner.notes().empty())
      std::printf("kbsim %s: bench %s failed\n", KBSIM_VERSION, opts.bench.c_str());
    if (writer)
      for (const auto& line : runner.notes()) std::printf("  %s\n", line.c_str());
    throw;
  }
  if (!writer) return runner.interrupted() ? static_cast<int>(ExitCode::kInterrupted) : 0;
  runner.write_results(out);
  out_dir->keep();

  const auto& g = runner.shown_graph();
  std::size_t nodes = runner.graphs().empty() ? g.nodes.size() : 0;
  for (const auto& gr : runner.graphs()) nodes += gr->nodes.size();
  double eps = runner.wall_s() > 0 ? static_cast<double>(runner.events()) / runner.wall_s() : 0.0;
  std::printf("kbsim %s: bench %s on %s (%zu nodes)\n", KBSIM_VERSION, opts.bench.c_str(), g.source.c_str(), nodes);
  std::printf("  sim time   %s ns\n", format_ns(ticks_to_ns(runner.sim_time())).c_str());
  std::printf("  events     %llu in %.3f s wall, %.2f M events/s (build %.3f s)\n",
              static_cast<unsigned long long>(runner.events()), runner.wall_s(), eps / 1e6, runner.build_wall_s());
  for (const auto& line : runner.placement_summary()) std::printf("  %s\n", line.c_str());
  if (runner.points()) {
    std::printf("  points     %zu run%s, %zu failed (points.json)\n", runner.points(),
                core::cluster::over_the_job().c_str(), runner.failed_points());
  }
  for (const auto& line : runner.notes()) std::printf("  %s\n", line.c_str());
  std::printf("  results    %s\n", (fs::path(out) / "results.json").c_str());
  for (const auto& line : runner.written()) std::printf("  %s\n", line.c_str());
  if (runner.interrupted()) {
    std::fprintf(stderr,
                 "kbsim: error: INTERRUPTED: bench %s stopped by %s at sim time %s ns; the results so far are "
                 "in %s, marked interrupted\n",
                 opts.bench.c_str(), RunWatch::reason(), format_ns(ticks_to_ns(runner.sim_time())).c_str(),
                 (fs::path(out) / "results.json").c_str());
    return static_cast<int>(ExitCode::kInterrupted);
  }
  if (runner.failed_points()) {
    std::fprintf(stderr,
                 "kbsim: error: POINTS_FAILED: %zu of %zu points of bench %s failed (their errors are in %s); the "
                 "other points' results are written\n",
                 runner.failed_points(), runner.points(), opts.bench.c_str(), (fs::path(out) / "points.json").c_str());
    return static_cast<int>(ExitCode::kBench);
  }
  return 0;
}

int cmd_topology(const Common& c, bool dump, const std::string& svg_dir, unsigned processes) {
  auto reg = make_registry(c);
  if (!svg_dir.empty()) {
    for (const auto& file : core::draw_topology(topology_file(c), c.sets, *reg, svg_dir))
      std::printf("wrote %s\n", file.c_str());
    return 0;
  }
  Graph g = core::load_topology(topology_file(c), c.sets, *reg);
  // Elaborate it as a run would (parameters resolved and checked, ports, node references, each component's own
  // checks), so a file `kbsim topology` passes, `kbsim run` accepts.
  core::Simulation check(core::elaborate(g, *reg), *reg);
  if (dump) {
    core::write_json_stdout([&](core::JsonWriter& w) { core::write_graph(w, g, *reg); });
    return 0;
  }
  std::printf("%s: %zu nodes, %zu directed edges\n", g.source.c_str(), g.nodes.size(), g.edges.size());
  std::map<std::string, std::size_t> impls;
  for (const auto& n : g.nodes) {
    reg->component_for_impl(n.impl, n.origin);
    ++impls[n.impl];
  }
  for (const auto& [impl, count] : impls) std::printf("  %-28s %zu\n", impl.c_str(), count);
  if (processes > 0) std::printf("%s\n", core::preview_parts(*check.elaboration(), processes).c_str());
  return 0;
}

/// The registry `kbsim run` and plugin-provided commands need before the command line can be parsed (they add
/// options): --plugins, --components and --log-level are picked out of argv first.
std::unique_ptr<core::Registry> early_registry(int argc, char** argv) {
  Common pre;
  std::vector<std::string> level;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    for (auto [flag, out] : {std::pair<std::string, std::vector<std::string>*>{"--plugins", &pre.plugins},
                             {"--components", &pre.components},
                             {"--log-level", &level}}) {
      if (a == flag && i + 1 < argc) out->push_back(argv[++i]);
      if (a.rfind(flag + "=", 0) == 0) out->push_back(a.substr(flag.size() + 1));
    }
  }
  for (const std::string& l : level)
    if (l == "debug" || l == "info" || l == "warn" || l == "error") pre.log_level = l;
  return make_registry(pre);
}

/// One plugin-provided command as a subcommand: its declared options, as text until parsed.
struct PluginCommand {
  const CommandType* type;
  std::string library;  ///< the path of the library that provides it
  CLI::App* app;
  std::vector<std::string> values;  ///< parallel to type->info.options
  std::vector<bool> flags;          ///< parallel too, for bool options
};

int run_plugin_command(const Common& c, const core::Registry& reg, PluginCommand& pc) {
  spdlog::set_level(spdlog::level::from_str(c.log_level));
  const CommandInfo& info = pc.type->info;
  std::vector<RawParam> given;
  for (std::size_t k = 0; k < info.options.size(); ++k) {
    const ParamSpec& spec = info.options[k];
    CLI::Option* opt = pc.app->get_option("--" + spec.name);
    if (opt->count() == 0) continue;
    std::string origin = "--" + spec.name;
    if (spec.type == ParamType::kBool)
      given.push_back({spec.name, ParamValue{bool(pc.flags[k])}, origin});
    else if (spec.type == ParamType::kString || spec.type == ParamType::kNode)
      given.push_back({spec.name, ParamValue{pc.values[k]}, origin + " " + pc.values[k]});  // text stays text
    else
      given.push_back({spec.name, parse_scalar(pc.values[k]), origin + " " + pc.values[k]});
  }
  Params options;
  try {
    options = core::resolve_params(info.options, given, "kbsim " + info.name, "kbsim " + info.name);
  } catch (const ConfigError& e) {
    throw UsageError(e.what());
  }
  core::CommandRunner runner(reg, info, std::move(options), topology_file(c), c.sets);
  std::unique_ptr<Command> cmd(pc.type->create());
  return runner.run(*cmd);
}

}  // namespace

int run_command_line(int argc, char** argv) {
  CLI::App app{"kbsim: a discrete-event simulator of a multi-die AI accelerator, built from plugins"};
  app.require_subcommand(1);
  app.set_version_flag("--version", KBSIM_VERSION);
  Common common;
  core::RunOptions run_opts;
  std::string out = "kbsim-out";
  std::string list_what = "all";
  std::string info_name;
  bool dump = false;
  std::string svg_dir;

  CLI::App* run = app.add_subcommand("run", "run a bench and write results.json");
  add_common(run, common);
  run->add_option("--bench", run_opts.bench,
                  "bench to run: a name, or its number in 'kbsim list benches'; default: system (runs the topology as "
                  "it is) when "
                  "--topology or a topology --set is given, else message-mesh (builds its own torus)")
      ->type_name("NAME");
  run->add_option("--param", run_opts.params, "a bench parameter (repeatable)")->type_name("KEY=VALUE");
  run->add_option("--out", out, "directory for results.json and topology.json")->capture_default_str();
  run->add_option("-j,--jobs", run_opts.jobs,
                  "worker processes for a bench's sweep points (default: every core; under mpirun: 1 per process)")
      ->type_name("N")
      ->check(CLI::Range(1u, 4096u));
  run->add_option("--partition", run_opts.partition,
                  "under mpirun, how a system is laid over the job's processes: structure (by SIP, then cube; node "
                  "order for a graph without groups), nodes (node order), or none (every process runs all of it)")
      ->type_name("METHOD")
      ->check(CLI::IsMember({"structure", "nodes", "none"}));
  run->add_option("--replot", run_opts.replot,
                  "draw a sweep's figures and tables again from the folder DIR an earlier run of the same bench, "
                  "parameters and --set wrote (its points.json), without simulating its points")
      ->type_name("DIR");
  double max_wall_s = 0;
  run->add_option("--max-wall", max_wall_s,
                  "stop after this many seconds of wall time and write the results so far, marked interrupted "
                  "(as Ctrl-C does; exit 8)")
      ->type_name("SECONDS")
      ->check(CLI::NonNegativeNumber);

  CLI::App* list = app.add_subcommand("list", "list what the loaded plugins provide");
  add_common(list, common);
  std::string index_dir;
  list->add_option("--write-index", index_dir,
                   "write DIR/kbsim-plugins.index, what each library in DIR provides, so that runs load only the "
                   "libraries they use (the build writes one for its own plugins)")
      ->type_name("DIR");
  list->add_option("what", list_what,
                   "components, benches, commands, services, observers, frontends, sections, libraries, a model "
                   "extension kind or its plural (e.g. kernels), or all");

  CLI::App* info = app.add_subcommand("info",
                                      "describe a component (implementation or type name), bench, command, "
                                      "service, observer, front-end, configuration section or model extension");
  add_common(info, common);
  info->add_option("name", info_name, "implementation name, component type, bench, section or extension")->required();

  CLI::App* topo = app.add_subcommand("topology", "check the topology and summarize it, or dump it as JSON");
  add_common(topo, common);
  topo->add_flag("--dump", dump, "print the resolved graph as JSON");
  topo->add_option("--svg", svg_dir, "write the topology front-end's pictures (SVG) into DIR")->type_name("DIR");
  unsigned processes = 0;
  topo->add_option("--ranks", processes,
                   "also show how the system would run in parts over N processes of mpirun (docs/scale-out.md): "
                   "the nodes of each, the links cut and the lookahead")
      ->type_name("N")
      ->check(CLI::Range(1u, 1u << 20));

  CLI::App* version = app.add_subcommand("version", "print the version and ABI");

  // Plugin-provided commands (e.g. `kbsim probe`) need the plugins loaded
  // before parsing. A plugin error is reported when such a command was asked
  // for; for --help or a built-in subcommand the commands are optional.
  std::string first;
  for (int i = 1; i < argc && first.empty(); ++i)
    if (argv[i][0] != '-') first = argv[i];
  const bool builtin = first == "list" || first == "info" || first == "topology" || first == "version";
  std::unique_ptr<core::Registry> early;
  PluginRunOptions plugin_run_options;
  if (first == "run") {
    early = early_registry(argc, argv);
    plugin_run_options.add(run, *early);
  } else if (!builtin) {
    try {
      early = early_registry(argc, argv);
    } catch (const Error&) {
      if (!first.empty()) throw;
    }
  }
  std::deque<PluginCommand> plugin_commands;
  if (early && first != "run")
    for (const auto& [name, entry] : early->commands()) {
      if (name == "run" || name == "list" || name == "info" || name == "topology" || name == "version")
        continue;  // built-ins win
      PluginCommand& pc = plugin_commands.emplace_back();
      pc.type = entry.type;
      pc.library = entry.from.path;
      pc.app = app.add_subcommand(name, entry.type->info.summary);
      add_common(pc.app, common);
      const auto& opts = entry.type->info.options;
      pc.values.resize(opts.size());
      pc.flags.assign(opts.size(), false);
      for (std::size_t k = 0; k < opts.size(); ++k) {
        const ParamSpec& spec = opts[k];
        try {
          if (spec.type == ParamType::kBool) {
            pc.app->add_flag_function(
                "--" + spec.name, [&pc, k](std::int64_t n) { pc.flags[k] = n > 0; }, spec.doc);
          } else {
            pc.app->add_option("--" + spec.name, pc.values[k], spec.doc)
                ->type_name(to_string(spec.type))
                ->default_str(format_value(spec.default_value));
          }
        } catch (const CLI::ConstructionError& e) {
          throw PluginError(pc.library + ": command '" + name + "' cannot declare option '--" + spec.name +
                            "': " + e.what());
        }
      }
    }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // The first word names the subcommand: say so when it is not one.
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      names.push_back(sub->get_name());
    if (std::string word = argc > 1 ? argv[1] : "";
        !word.empty() && word[0] != '-' && std::find(names.begin(), names.end(), word) == names.end()) {
      std::fprintf(stderr, "kbsim: error: unknown subcommand '%s'%s (see 'kbsim --help')\n", one_line(word).c_str(),
                   suggest(word, names).c_str());
      return static_cast<int>(ExitCode::kUsage);
    }
    std::fprintf(stderr, "kbsim: error: %s (see 'kbsim --help')\n", one_line(e.what()).c_str());
    return static_cast<int>(ExitCode::kUsage);
  }

  if (run->parsed()) {
    plugin_run_options.apply(run_opts, data_dir());
    return cmd_run(common, *early, run_opts, run->count("--bench") > 0, out, max_wall_s);
  }
  if (list->parsed() && !index_dir.empty()) {
    core::index_plugin_directory(index_dir);
    return 0;
  }
  if (list->parsed()) {
    auto reg = make_registry(common);
    print_list(*reg, list_what);
    return 0;
  }
  if (info->parsed()) {
    auto reg = make_registry(common);
    print_info(*reg, info_name);
    return 0;
  }
  if (topo->parsed()) return cmd_topology(common, dump, svg_dir, processes);
  for (PluginCommand& pc : plugin_commands)
    if (pc.app->parsed()) return run_plugin_command(common, *early, pc);
  if (version->parsed()) {
    std::printf("kbsim %s (plugin ABI %u, %s, %s)\n", KBSIM_VERSION, kAbiVersion, KBSIM_BUILD_TAG,
                core::cluster::built_with_mpi()
                    ? "with MPI: mpirun runs a system in parts, or shares sweep points out, over its processes"
                    : "without MPI");
    return 0;
  }
  return 0;
}

}  // namespace kbsim::cli
