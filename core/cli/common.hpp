// What the subcommands share: the options that find the plugins and the
// topology, and the registry and default files they name.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kbsim/graph.hpp"
#include "kbsim/params.hpp"
#include "kbsim/plugin.hpp"

namespace kbsim::core {
class Registry;
}

namespace kbsim::cli {

struct Common {
  std::vector<std::string> plugins;
  std::vector<std::string> components;
  std::string topology;
  std::vector<std::string> sets;
  std::string log_level = "warn";
};

/// The directory kbsim's executable is in, or stands for: the default plugins are in ../plugins (a build tree) or
/// ../lib/kbsim/plugins, the default files in ../share/kbsim. Default: the running executable's; a host that is not
/// the kbsim executable (the Python module) sets where its kbsim is.
void set_bin_dir(std::filesystem::path dir);
/// The builtin plugins' directory: the build tree's, else the install's.
std::filesystem::path default_plugin_dir();
/// Where the default components.yaml, topology.yaml and configuration sections live: the install's share/kbsim,
/// else the source tree this binary was built from.
std::filesystem::path data_dir();
/// Benches the program that embeds the command line provides itself (the Python module's live session,
/// kbsim.Session): make_registry adds them to every registry, as library "(host)". The kbsim executable adds none.
void add_host_bench(BenchType bench);
/// --plugins, --components, --topology, --set and --log-level on `app`.
void add_common(CLI::App* app, Common& c);
/// The registry of the plugins `c` names (and the default ones), with the components files loaded.
/// `tolerant`: plugin files that fail to load are passed over (Registry::set_tolerant), for `kbsim list` and `info`.
std::unique_ptr<core::Registry> make_registry(const Common& c, bool tolerant = false);
/// The registry `kbsim run` and plugin-provided commands need before the command line can be parsed (they add
/// options): --plugins, --components and --log-level are picked out of argv first.
std::unique_ptr<core::Registry> early_registry(int argc, char** argv);
/// The topology file: --topology, else the default one.
std::filesystem::path topology_file(const Common& c);

/// An option a plugin declared (`spec`), as given on the command line: `text` (or `on`, for a bool flag), typed
/// as the declaration says (a string stays text), named by its option for errors.
RawParam given_option(const ParamSpec& spec, const std::string& text, bool on);

}  // namespace kbsim::cli
