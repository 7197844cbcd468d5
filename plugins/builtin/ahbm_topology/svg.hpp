// Pictures of an AHBM system: `kbsim topology --svg DIR`.
#pragma once

#include <filesystem>
#include <vector>

#include "build.hpp"

namespace kbsim::ahbm_topology {

/// Write system.svg, sip.svg and cube.svg into `dir` (created if missing);
/// returns the files written. Throws ConfigError if `dir` cannot be written.
std::vector<std::filesystem::path> write_svgs(const Compiled& system, const std::filesystem::path& dir);

}  // namespace kbsim::ahbm_topology
