#include "cli/commands.hpp"

#include <cstdio>
#include <map>
#include <optional>

#include "cli/common.hpp"
#include "cli/describe.hpp"
#include "cli/plugin_commands.hpp"
#include "cli/run_command.hpp"
#include "cluster/world.hpp"
#include "component/simulation.hpp"
#include "kbsim/files.hpp"
#include "kbsim/text.hpp"
#include "plugin/registry.hpp"
#include "report/graph_text.hpp"
#include "report/json.hpp"
#include "report/staged_files.hpp"
#include "split/job_placement.hpp"
#include "topology/topology.hpp"

namespace kbsim::cli {

namespace {

const std::vector<std::string> kBuiltin = {"run", "list", "info", "topology", "version"};

/// What `kbsim topology` writes besides its summary.
struct TopologyOutputs {
  bool dump = false;    ///< --dump: the resolved graph as JSON on standard output
  std::string svg_dir;  ///< --svg DIR: the front-end's pictures
  std::string dot;      ///< --dot FILE: the graph as Graphviz DOT
  std::string mermaid;  ///< --mermaid FILE: the graph as a Mermaid flowchart
  std::string json;     ///< --json FILE: the resolved graph as JSON (what --dump prints)
};

/// Write the graph's text views asked for (DOT, Mermaid, JSON), all or none, saying which files were written.
void write_text_views(const Graph& g, const TopologyOutputs& out, const core::Registry& reg) {
  core::StagedFiles files;
  if (!out.dot.empty()) files.text(out.dot, core::graph_dot(g));
  if (!out.mermaid.empty()) files.text(out.mermaid, core::graph_mermaid(g));
  if (!out.json.empty()) files.json(out.json, [&](core::JsonWriter& w) { core::write_graph(w, g, reg); });
  files.commit();
  for (const std::string& file : {out.dot, out.mermaid, out.json})
    if (!file.empty()) std::printf("wrote %s\n", file.c_str());
}

int cmd_topology(const Common& c, const TopologyOutputs& out, unsigned processes) {
  check_output_file("--dot", out.dot);
  check_output_file("--mermaid", out.mermaid);
  check_output_file("--json", out.json);
  auto reg = make_registry(c);
  if (!out.svg_dir.empty()) {
    for (const auto& file : core::draw_topology(topology_file(c), c.sets, *reg, out.svg_dir))
      std::printf("wrote %s\n", file.c_str());
    return 0;
  }
  Graph g = core::load_topology(topology_file(c), c.sets, *reg);
  // Elaborate it as a run would (parameters resolved and checked, ports, node references, each component's own
  // checks), so a file `kbsim topology` passes, `kbsim run` accepts.
  core::Simulation check(core::elaborate(g, *reg), *reg);
  if (!out.dot.empty() || !out.mermaid.empty() || !out.json.empty()) {
    write_text_views(g, out, *reg);
    return 0;
  }
  if (out.dump) {
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

/// Parse; for --help and --version the exit code, after printing them; a parse error is a UsageError.
std::optional<int> parse(CLI::App& app, int argc, char** argv) {
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
      throw UsageError("unknown subcommand '" + one_line(word) + "'" + suggest(word, names) + " (see 'kbsim --help')");
    }
    throw UsageError(one_line(e.what()) + " (see 'kbsim --help')");
  }
  return std::nullopt;
}

/// The first word that is not an option: the subcommand asked for.
std::string first_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-') return argv[i];
  return {};
}

}  // namespace

int run_command_line(int argc, char** argv) {
  CLI::App app{"kbsim: a discrete-event simulator of a multi-die AI accelerator, built from plugins"};
  app.require_subcommand(1);
  app.set_version_flag("--version", KBSIM_VERSION);
  Common common;
  RunCommand run(app, common);

  CLI::App* list = app.add_subcommand("list", "list what the loaded plugins provide");
  add_common(list, common);
  std::string index_dir, list_what = "all";
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
  std::string info_name;
  info->add_option("name", info_name, "implementation name, component type, bench, section or extension")->required();

  CLI::App* topo = app.add_subcommand("topology", "check the topology and summarize it, or dump it as JSON");
  add_common(topo, common);
  TopologyOutputs topo_out;
  CLI::Option* dump = topo->add_flag("--dump", topo_out.dump, "print the resolved graph as JSON");
  CLI::Option* svg =
      topo->add_option("--svg", topo_out.svg_dir, "write the topology front-end's pictures (SVG) into DIR")
          ->type_name("DIR");
  topo->add_option("--dot", topo_out.dot, "write the resolved graph as a Graphviz DOT digraph into FILE")
      ->type_name("FILE")
      ->excludes(dump)
      ->excludes(svg);
  topo->add_option("--mermaid", topo_out.mermaid, "write the resolved graph as a Mermaid flowchart into FILE")
      ->type_name("FILE")
      ->excludes(dump)
      ->excludes(svg);
  topo->add_option("--json", topo_out.json, "write the resolved graph as JSON (what --dump prints) into FILE")
      ->type_name("FILE")
      ->excludes(dump)
      ->excludes(svg);
  unsigned processes = 0;
  topo->add_option("--ranks", processes,
                   "also show how the system would run in parts over N processes of mpirun (docs/scale-out.md): "
                   "the nodes of each, the links cut and the lookahead")
      ->type_name("N")
      ->check(CLI::Range(1u, 1u << 20));

  CLI::App* version = app.add_subcommand("version", "print the version and ABI");

  // `kbsim run` and plugin-provided commands (e.g. `kbsim probe`) take options the plugins declare, so the plugins
  // are found before parsing. A plugin error is reported when such a command was asked for; for --help the plugin
  // commands are optional.
  const std::string first = first_word(argc, argv);
  std::unique_ptr<core::Registry> early;
  PluginCommands plugin_commands;
  if (first == "run") {
    early = early_registry(argc, argv);
    run.add_plugin_options(*early);
  } else if (std::find(kBuiltin.begin(), kBuiltin.end(), first) == kBuiltin.end()) {
    try {
      early = early_registry(argc, argv);
    } catch (const Error&) {
      if (!first.empty()) throw;
    }
    if (early) plugin_commands.add(app, common, *early, kBuiltin);
  }

  if (const std::optional<int> code = parse(app, argc, argv)) return *code;
  if (run.parsed()) return run.run(*early);
  if (list->parsed() && !index_dir.empty()) {
    core::index_plugin_directory(index_dir, {default_plugin_dir()});
    return 0;
  }
  // A plugin file that fails to load does not hide the others: they are shown, then its error (exit 4).
  auto broken = [](const core::Registry& reg) {
    for (const std::string& e : reg.broken()) std::fprintf(stderr, "kbsim: error: %s\n", one_line(e).c_str());
    return reg.broken().empty() ? 0 : static_cast<int>(ExitCode::kPlugin);
  };
  if (list->parsed()) {
    auto reg = make_registry(common, true);
    print_list(*reg, list_what);
    return broken(*reg);
  }
  if (info->parsed()) {
    auto reg = make_registry(common, true);
    print_info(*reg, info_name);
    return broken(*reg);
  }
  if (topo->parsed()) return cmd_topology(common, topo_out, processes);
  if (early)
    if (const std::optional<int> code = plugin_commands.run_parsed(common, *early)) return *code;
  if (version->parsed()) {
    std::printf("kbsim %s (plugin ABI %u, %s, %s)\n", KBSIM_VERSION, kAbiVersion, KBSIM_BUILD_TAG,
                core::cluster::built_with_mpi() ? "with MPI: mpirun runs a system in parts, or shares sweep points "
                                                  "out, over its processes"
                                                : "without MPI");
    return 0;
  }
  return 0;
}

}  // namespace kbsim::cli
