#pragma once
#include <string>
namespace kbsim::milestone {
/// The SIP topologies of the allreduce milestone, 2x2 panels: ring_1d of 6,
/// torus_2d 3x2 (wrap links as arcs outside the grid), mesh_2d_no_wrap 3x2, and
/// lrab's reduction inside SIP 0 (4x4 cubes towards the center root).
std::string topology_diagram();
}  // namespace kbsim::milestone
