// topology.yaml -> Graph. The explicit form lists nodes and edges; `--set`
// overrides are applied to the YAML tree first, so they are checked exactly
// like file content (and named in errors as "--set key=value").
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kbsim/graph.hpp"

namespace kbsim::core {

/// Load and check a topology file, applying `overrides` ("dotted.path=value").
Graph load_topology(const std::filesystem::path& file, const std::vector<std::string>& overrides);

/// Same, from YAML text (for tests); `name` stands for the file in messages.
Graph parse_topology(const std::string& text, const std::string& name, const std::vector<std::string>& overrides);

}  // namespace kbsim::core
