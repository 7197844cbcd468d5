#include "harness.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace kbsim::test {

std::unique_ptr<core::Registry> builtin_registry() {
  auto reg = std::make_unique<core::Registry>();
  reg->add_search_dir(KBSIM_PLUGIN_DIR, true);
  reg->discover();
  reg->load_components_file(std::filesystem::path(KBSIM_SOURCE_DIR) / "components.yaml");
  return reg;
}

const core::Registry& shared_registry() {
  static const std::unique_ptr<core::Registry> reg = builtin_registry();
  return *reg;
}

std::filesystem::path temp_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "kbsim";
  for (char& c : name)
    if (c == '/') c = '_';
  auto dir = std::filesystem::temp_directory_path() / ("kbsim-test-" + std::to_string(::getpid()) + "-" + name);
  static std::string prepared;  // wiped once per test, then shared by its calls
  if (prepared != dir.string()) {
    std::filesystem::remove_all(dir);
    prepared = dir.string();
  }
  std::filesystem::create_directories(dir);
  return dir;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p);
  out << text;
}

CliResult run_kbsim(const std::string& args) { return run_kbsim_with("", args); }

CliResult run_kbsim_with(const std::string& prefix, const std::string& args) {
  static int calls = 0;
  auto dir = temp_dir() / ("cli" + std::to_string(++calls));
  std::filesystem::create_directories(dir);
  std::string cmd = prefix + (prefix.empty() ? "" : " ") + std::string(KBSIM_BIN) + " " + args + " >" +
                    (dir / "out").string() + " 2>" + (dir / "err").string() + " </dev/null";
  int status = std::system(cmd.c_str());
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(dir / "out");
  r.err = read_file(dir / "err");
  return r;
}

Graph load_topology(const std::filesystem::path& file, const std::vector<std::string>& overrides) {
  return core::load_topology(file, overrides, shared_registry());
}

Graph parse_topology(const std::string& text, const std::string& name, const std::vector<std::string>& overrides) {
  return core::parse_topology(text, name, overrides, shared_registry());
}

void add_kernel(core::Registry& reg, const std::string& name, tl::KernelFn fn, const std::string& summary) {
  reg.add_extension({std::string(kKernelExtension), name, summary, std::make_shared<const tl::KernelFn>(fn)});
}

std::unique_ptr<core::SimulatedSystem> build_system(const core::Registry& reg, const std::string& yaml,
                                                    const std::vector<std::string>& overrides) {
  Graph g = core::parse_topology(yaml, "test.yaml", overrides, reg);
  return core::simulated(g, reg);
}

}  // namespace kbsim::test
