// Checking configured parameter values against a component's or bench's declarations.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kbsim/graph.hpp"
#include "kbsim/params.hpp"

namespace kbsim::core {

/// Every declared parameter, from `given` or its default. Unknown names, wrong
/// types and missing required parameters throw ConfigError naming the origin.
/// `owner` names what the parameters belong to, e.g. "builtin.mesh_node". `type_note`, called only then, ends the
/// errors that the declarations' owner may have caused rather than the values (an unknown name, a missing one):
/// for a component, the components.yaml entry that chose its type (Registry::mapping_note).
Params resolve_params(const std::vector<ParamSpec>& specs, const std::vector<RawParam>& given, const std::string& owner,
                      const std::string& owner_origin, const std::function<std::string()>& type_note = {});

/// `key=value` items as given with --param; the value of a string parameter is taken as written ("--param
/// sizes=512" is the text 512), any other is parsed as a scalar. UsageError on an item without `key=`.
std::vector<RawParam> parse_param_args(const std::vector<std::string>& given, const std::vector<ParamSpec>& specs);

}  // namespace kbsim::core
