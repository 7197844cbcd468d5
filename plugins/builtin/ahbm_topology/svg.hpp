// Pictures of an AHBM system: `kbsim topology --svg DIR`.
#pragma once

#include <filesystem>
#include <vector>

#include "build.hpp"

namespace kbsim::ahbm_topology {

/// Write system.svg, sip.svg, cube.svg and pe.svg (PE 0/0/0) into `dir` (created if missing);
/// returns the files written. Throws ConfigError if `dir` cannot be written.
std::vector<std::filesystem::path> write_svgs(const Compiled& system, const std::filesystem::path& dir);

/// One picture, by name: "system", "sip/S", "cube/S/C" or "pe/S/C/P"; empty for
/// a name that is not one. Shapes carry data-node / data-edge / data-view
/// attributes (a viewer's hover and drill-down).
std::string view_svg(const Compiled& system, std::string_view name);

}  // namespace kbsim::ahbm_topology
