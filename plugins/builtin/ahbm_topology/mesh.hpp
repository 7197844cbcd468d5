// The cube's NoC router grid, generated from the cube geometry and PE layout
// (the reference's mesh generator, rebuilt; see docs/model.md "Cube mesh").
#pragma once

#include <array>
#include <vector>

#include "spec.hpp"

namespace kbsim::ahbm_topology {

struct Cell {
  unsigned row = 0, col = 0;
  bool operator==(const Cell&) const = default;
};

struct MeshLayout {
  std::vector<double> col_x;            ///< router column positions (mm)
  std::vector<double> row_y;            ///< router row positions (mm)
  std::vector<bool> present;            ///< rows x cols; false inside the HBM exclusion zone
  unsigned hbm_row0 = 0, hbm_col0 = 0;  ///< the 2x2 exclusion zone's top-left cell
  std::vector<Cell> pe;                 ///< router of each PE (index = PE id)
  std::vector<double> pe_x, pe_y;       ///< PE centres (mm)
  Cell m_cpu, sram;
  std::array<std::vector<Cell>, 4> ucie;  ///< per side (N, E, S, W): router of each connection

  unsigned rows() const { return static_cast<unsigned>(row_y.size()); }
  unsigned cols() const { return static_cast<unsigned>(col_x.size()); }
  bool has(unsigned r, unsigned c) const { return r < rows() && c < cols() && present[r * cols() + c]; }
};

/// Throws ConfigError (naming spec.source) if the geometry cannot hold the layout.
MeshLayout generate_mesh(const AhbmSpec& spec);

}  // namespace kbsim::ahbm_topology
