// topology.yaml -> Graph. The core reads the YAML and applies the `--set`
// overrides to the tree first, so they are checked exactly like file content
// (and named in errors as "--set key=value"). Then it offers the document to
// the loaded topology front-ends (kbsim/config/frontend.hpp); one that claims
// it compiles it. Otherwise the document must be the explicit form (nodes +
// edges), read here.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kbsim/graph.hpp"

namespace kbsim::config {
class YamlSource;
class Origins;
class Components;
}  // namespace kbsim::config

namespace kbsim::core {

class Registry;

/// Apply "dotted.path=value" overrides to a YAML tree, recording their origins ("--set dotted.path=value").
void apply_overrides(config::YamlSource& src, config::Origins& origins, const std::vector<std::string>& overrides);
/// Apply one, whose errors and values are named `label` (what the user typed, when the path was rewritten).
void apply_override(config::YamlSource& src, config::Origins& origins, const std::string& text,
                    const std::string& label);

/// What topology front-ends ask of the registry: component parameters resolved
/// against their declarations.
std::unique_ptr<config::Components> components_of(const Registry& registry);

/// Load and check a topology file, applying `overrides` ("dotted.path=value").
Graph load_topology(const std::filesystem::path& file, const std::vector<std::string>& overrides,
                    const Registry& registry);

/// Same, from YAML text (for tests); `name` stands for the file in messages.
Graph parse_topology(const std::string& text, const std::string& name, const std::vector<std::string>& overrides,
                     const Registry& registry);

/// `kbsim topology --svg DIR`: the claiming front-end's pictures; returns the files written.
std::vector<std::filesystem::path> draw_topology(const std::filesystem::path& file,
                                                 const std::vector<std::string>& overrides, const Registry& registry,
                                                 const std::filesystem::path& dir);

/// The claiming front-end's interactive picture `name` (config::FrontEnd::view); empty if it has none.
std::string view_topology(const std::filesystem::path& file, const std::vector<std::string>& overrides,
                          const Registry& registry, std::string_view name);

}  // namespace kbsim::core
