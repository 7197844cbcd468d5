// The AHBM topology compiler: the `system:` form of topology.yaml -> the
// explicit graph (nodes, directed edges with kinds, routing views, and the
// memory-map attributes components and benches read).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kbsim/config/frontend.hpp"
#include "mesh.hpp"
#include "spec.hpp"

namespace kbsim::ahbm_topology {

/// Edge kinds whose links a routing view leaves out (docs/model.md, "Routing views").
struct ViewNames {
  static constexpr const char* kData = "data";      ///< PE DMA / data path: no command edges
  static constexpr const char* kMemory = "memory";  ///< host memory path and M_CPU DMA: no PE-internal control edges
  static constexpr const char* kLocal = "local";    ///< same-cube traffic: no UCIe
};

struct Compiled {
  AhbmSpec spec;
  MeshLayout mesh;
  Graph graph;
};

/// `components` resolves block attributes against their components'
/// declarations (hbm_ctrl's efficiency scales its router link).
Compiled compile(const YamlSource& src, const Origins& origins, const config::Components& components);

/// True if the YAML document is in the AHBM form (has `system`, `sip` or `cube`).
bool is_ahbm(const YAML::Node& root);

}  // namespace kbsim::ahbm_topology
