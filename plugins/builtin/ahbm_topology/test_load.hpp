// For the front-end's tests: compile an AHBM topology file with --set
// overrides, keeping the spec and mesh layout (the plain graph loses them).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "build.hpp"
#include "harness.hpp"
#include "kbsim/config/yaml.hpp"
#include "topology/topology.hpp"

namespace kbsim::ahbm_topology {

inline Compiled load_ahbm(const std::filesystem::path& file, const std::vector<std::string>& overrides) {
  config::YamlSource src = config::YamlSource::load(file);
  config::Origins origins(src);
  core::apply_overrides(src, origins, overrides);
  if (!is_ahbm(src.root())) throw ConfigError(file.string() + ": not an AHBM system description");
  return compile(src, origins, *core::components_of(test::shared_registry()));
}

}  // namespace kbsim::ahbm_topology
