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

Graph load_topology(const std::filesystem::path& file, const std::vector<std::string>& overrides) {
  return core::load_topology(file, overrides, shared_registry());
}

Graph parse_topology(const std::string& text, const std::string& name, const std::vector<std::string>& overrides) {
  return core::parse_topology(text, name, overrides, shared_registry());
}

void add_kernel(core::Registry& reg, const std::string& name, tl::KernelFn fn, const std::string& summary) {
  reg.add_extension(
      {std::string(kKernelExtension), name, summary, std::make_shared<const tl::KernelFn>(std::move(fn))});
}

std::unique_ptr<core::SimulatedSystem> build_system(const core::Registry& reg, const std::string& yaml,
                                                    const std::vector<std::string>& overrides) {
  Graph g = core::parse_topology(yaml, "test.yaml", overrides, reg);
  return core::simulated(g, reg);
}

}  // namespace kbsim::test
