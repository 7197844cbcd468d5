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
#include "kbsim/testing_cli.hpp"
#include "plugin/registry.hpp"
#include "topology/topology.hpp"

namespace kbsim::test {

/// A registry that loaded every plugin of the build and the default components.yaml.
std::unique_ptr<core::Registry> builtin_registry();

/// One registry with the builtin plugins, loaded once and shared by the tests that only read it.
const core::Registry& shared_registry();

// The command-line test kit of the SDK (kbsim/testing_cli.hpp): temp_dir, read_file, write_file, run_kbsim,
// config_error.
using testkit::CliResult;
using testkit::config_error;
using testkit::read_file;
using testkit::run_kbsim;
using testkit::run_kbsim_with;
using testkit::temp_dir;
using testkit::write_file;

/// core::load_topology / parse_topology with the shared builtin registry (its topology front-ends).
Graph load_topology(const std::filesystem::path& file, const std::vector<std::string>& overrides);
Graph parse_topology(const std::string& text, const std::string& name, const std::vector<std::string>& overrides);

/// Register a tl kernel in-process (what kbsim::add_kernel does in a plugin).
void add_kernel(core::Registry& reg, const std::string& name, tl::KernelFn fn, const std::string& summary = "test");

/// Elaborate a topology given as YAML text with the builtin registry.
std::unique_ptr<core::SimulatedSystem> build_system(const core::Registry& reg, const std::string& yaml,
                                                    const std::vector<std::string>& overrides = {});

/// The ConfigError of parsing a topology given as YAML text (named "t.yaml").
inline std::string parse_error(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return config_error([&] { parse_topology(yaml, "t.yaml", overrides); });
}

}  // namespace kbsim::test
