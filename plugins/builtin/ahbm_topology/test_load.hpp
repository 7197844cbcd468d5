// For the front-end's tests: kbsim's own plugins, loaded once, and an AHBM
// topology file compiled with --set overrides, keeping the spec and mesh
// layout (the plain graph loses them).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "build.hpp"
#include "kbsim/config/yaml.hpp"
#include "kbsim/testing.hpp"

namespace kbsim::ahbm_topology {

/// kbsim's own plugins (this front-end among them), shared by the tests that only read them.
inline const testkit::Plugins& plugins() {
  static const testkit::Plugins loaded;
  return loaded;
}

inline Compiled load_ahbm(const std::filesystem::path& file, const std::vector<std::string>& overrides) {
  config::YamlSource src = config::YamlSource::load(file);
  config::Origins origins(src);
  testkit::apply_overrides(src, origins, overrides);
  if (!is_ahbm(src.root())) throw ConfigError(file.string() + ": not an AHBM system description");
  return compile(src, origins, plugins().components());
}

}  // namespace kbsim::ahbm_topology
