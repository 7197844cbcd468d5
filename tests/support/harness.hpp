// Test helpers: registries with the built plugins, temporary directories, and
// running the kbsim binary as a user would.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "component/simulation.hpp"
#include "kbsim/pe/kernels.hpp"
#include "kbsim/pe/memory_store.hpp"
#include "plugin/registry.hpp"
#include "topology/topology.hpp"

namespace kbsim::test {

/// A registry that loaded every plugin of the build and the default components.yaml.
std::unique_ptr<core::Registry> builtin_registry();

/// One registry with the builtin plugins, loaded once and shared by the tests that only read it.
const core::Registry& shared_registry();

/// A fresh, empty directory for this test (under the system temp dir).
std::filesystem::path temp_dir();

std::string read_file(const std::filesystem::path& p);
void write_file(const std::filesystem::path& p, const std::string& text);

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
};
/// Run `kbsim <args>` through the shell; stdout and stderr are captured.
CliResult run_kbsim(const std::string& args);
/// The same, behind a launcher such as "mpirun -np 2" (with its environment assignments first).
CliResult run_kbsim_with(const std::string& prefix, const std::string& args);

/// core::load_topology / parse_topology with the shared builtin registry (its topology front-ends).
Graph load_topology(const std::filesystem::path& file, const std::vector<std::string>& overrides);
Graph parse_topology(const std::string& text, const std::string& name, const std::vector<std::string>& overrides);

/// Register a tl kernel in-process (what kbsim::add_kernel does in a plugin).
void add_kernel(core::Registry& reg, const std::string& name, tl::KernelFn fn, const std::string& summary = "test");

/// Elaborate a topology given as YAML text with the builtin registry.
std::unique_ptr<core::SimulatedSystem> build_system(const core::Registry& reg, const std::string& yaml,
                                                    const std::vector<std::string>& overrides = {});

/// The message of the ConfigError `f` throws ("" and a test failure if none).
template <class F>
std::string config_error(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a ConfigError, got: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected a ConfigError, nothing was thrown";
  return "";
}

/// The ConfigError of parsing a topology given as YAML text (named "t.yaml").
inline std::string parse_error(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return config_error([&] { parse_topology(yaml, "t.yaml", overrides); });
}

}  // namespace kbsim::test
