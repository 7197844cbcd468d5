// topology.yaml -> Graph. The explicit form lists nodes and edges; the AHBM
// form (system/sip/cube) is compiled by ahbm/build.hpp; `--set`
// overrides are applied to the YAML tree first, so they are checked exactly
// like file content (and named in errors as "--set key=value").
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kbsim/graph.hpp"

namespace kbsim::core {

class YamlSource;
class Origins;
namespace ahbm {
struct Compiled;
}

/// Apply "dotted.path=value" overrides to a YAML tree, recording their origins.
void apply_overrides(YamlSource& src, Origins& origins, const std::vector<std::string>& overrides);

/// Load an AHBM system description with its spec and mesh layout (for pictures and the probe).
ahbm::Compiled load_ahbm(const std::filesystem::path& file, const std::vector<std::string>& overrides);

/// Load and check a topology file, applying `overrides` ("dotted.path=value").
Graph load_topology(const std::filesystem::path& file, const std::vector<std::string>& overrides);

/// Same, from YAML text (for tests); `name` stands for the file in messages.
Graph parse_topology(const std::string& text, const std::string& name, const std::vector<std::string>& overrides);

}  // namespace kbsim::core
