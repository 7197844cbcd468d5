// ccl.yaml -> CclConfig (kbsim/ccl.hpp): read like the topology, `--set ccl.*`
// overrides applied to the tree first, every key checked against the defaults'
// declarations and the registered algorithms' own.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kbsim/ccl.hpp"

namespace kbsim::core {

class Registry;

/// Whether a --set addresses ccl.yaml ("ccl.KEY=VALUE") rather than the topology.
inline bool is_ccl_override(const std::string& set) { return set.rfind("ccl.", 0) == 0; }

/// The overrides among `sets` that address ccl.yaml ("ccl.KEY=VALUE"), as typed. The others are left in `sets`.
std::vector<std::string> take_ccl_overrides(std::vector<std::string>& sets);

/// Load and check a CCL configuration file, applying `overrides` ("ccl.defaults.n_slots=8", "ccl.algorithms.X.k=v",
/// and "ccl.n_slots=8" and "ccl.X.k=v" as short forms of these); an error names an override as typed.
CclConfig load_ccl(const std::filesystem::path& file, const std::vector<std::string>& overrides,
                   const Registry& registry);

/// Same, from YAML text (for tests); `name` stands for the file in messages.
CclConfig parse_ccl(const std::string& text, const std::string& name, const std::vector<std::string>& overrides,
                    const Registry& registry);

}  // namespace kbsim::core
