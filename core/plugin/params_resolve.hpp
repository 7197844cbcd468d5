// Checking configured parameter values against a component's or bench's declarations.
#pragma once

#include <string>
#include <vector>

#include "kbsim/graph.hpp"
#include "kbsim/params.hpp"

namespace kbsim::core {

/// Every declared parameter, from `given` or its default. Unknown names, wrong
/// types and missing required parameters throw ConfigError naming the origin.
/// `owner` names what the parameters belong to, e.g. "builtin.mesh_node".
Params resolve_params(const std::vector<ParamSpec>& specs, const std::vector<RawParam>& given, const std::string& owner,
                      const std::string& owner_origin);

}  // namespace kbsim::core
