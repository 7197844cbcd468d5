#include "cli/common.hpp"

#include <spdlog/spdlog.h>

#include <cstdlib>

#include "plugin/registry.hpp"

namespace fs = std::filesystem;

namespace kbsim::cli {

namespace {

fs::path& bin_dir() {
  static fs::path dir;
  return dir;
}

std::vector<BenchType>& host_benches() {
  static std::vector<BenchType> benches;
  return benches;
}

fs::path exe_dir() {
  if (!bin_dir().empty()) return bin_dir();
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

}  // namespace

void set_bin_dir(fs::path dir) { bin_dir() = std::move(dir); }

fs::path default_plugin_dir() {
  fs::path build = exe_dir() / ".." / "plugins";
  if (fs::is_directory(build)) return build;
  return exe_dir() / ".." / "lib" / "kbsim" / "plugins";
}

void add_host_bench(BenchType bench) { host_benches().push_back(std::move(bench)); }

fs::path data_dir() {
  fs::path installed = exe_dir() / ".." / "share" / "kbsim";
  if (fs::exists(installed / "components.yaml")) return installed;
  return KBSIM_SOURCE_DIR;
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

std::unique_ptr<core::Registry> make_registry(const Common& c, bool tolerant) {
  spdlog::set_level(spdlog::level::from_str(c.log_level));
  auto reg = std::make_unique<core::Registry>();
  reg->set_tolerant(tolerant);
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
  for (const BenchType& b : host_benches()) reg->add_bench_type(b, "(host)");
  reg->load_components_file(data_dir() / "components.yaml");
  for (const auto& f : c.components) reg->load_components_file(f);
  return reg;
}

fs::path topology_file(const Common& c) {
  return c.topology.empty() ? data_dir() / "topology.yaml" : fs::path(c.topology);
}

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

RawParam given_option(const ParamSpec& spec, const std::string& text, bool on) {
  const std::string origin = "--" + spec.name;
  if (spec.type == ParamType::kBool) return {spec.name, ParamValue{on}, origin};
  if (spec.type == ParamType::kString || spec.type == ParamType::kNode)
    return {spec.name, ParamValue{text}, origin + " " + text};  // text stays text
  return {spec.name, parse_scalar(text), origin + " " + text};
}

}  // namespace kbsim::cli
