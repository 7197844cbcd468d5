#include "mesh.hpp"

#include <algorithm>
#include <cmath>

#include "kbsim/text.hpp"

namespace kbsim::ahbm_topology {

namespace {

unsigned nearest(const std::vector<double>& positions, double v) {
  unsigned best = 0;
  for (unsigned i = 1; i < positions.size(); ++i)
    if (std::abs(positions[i] - v) < std::abs(positions[best] - v)) best = i;
  return best;
}

/// `n` picks spread evenly over `candidates` (in order).
std::vector<unsigned> spread(const std::vector<unsigned>& candidates, unsigned n) {
  std::vector<unsigned> out;
  for (unsigned i = 0; i < n; ++i) {
    std::size_t k =
        n == 1 ? 0 : static_cast<std::size_t>(std::lround(double(i) * double(candidates.size() - 1) / (n - 1)));
    out.push_back(candidates[std::min(k, candidates.size() - 1)]);
  }
  return out;
}

}  // namespace

MeshLayout generate_mesh(const AhbmSpec& s) {
  MeshLayout m;
  auto fail_at = [&](const std::string& origin, const std::string& what) {
    throw ConfigError((origin.empty() ? s.source + ": cube.geometry" : origin) + ": " + what);
  };
  auto fail = [&](const std::string& what) { fail_at(s.cube_w_origin, what); };
  const double w = s.cube_w_mm, h = s.cube_h_mm, pitch = s.pe_pitch_mm;
  const unsigned ppc = s.pe_per_corner;
  const double margin = 1.5;
  if (2 * margin + 2 * (ppc - 1) * pitch + s.max_router_spacing_mm > w)
    fail("cube_mm.w = " + format_ns(w) + " mm is too narrow for " + std::to_string(ppc) + " PEs per corner at " +
         format_ns(pitch) + " mm pitch");

  // Rows: the PE rows of the top half, two HBM rows, the PE rows of the bottom half.
  const unsigned rph = (std::max(s.ucie_connections, 2u) + 1) / 2;
  for (unsigned k = 0; k < rph; ++k) m.row_y.push_back(margin + k * pitch);
  m.row_y.push_back(h / 2 - s.hbm_gap_mm);
  m.row_y.push_back(h / 2 + s.hbm_gap_mm);
  for (unsigned k = 0; k < rph; ++k) m.row_y.push_back(h - margin - (rph - 1 - k) * pitch);
  for (std::size_t i = 1; i < m.row_y.size(); ++i)
    if (m.row_y[i] <= m.row_y[i - 1])
      fail_at(s.cube_h_origin, "cube_mm.h = " + format_ns(h) + " mm is too short for " + std::to_string(rph) +
                                   " PE rows per half and the HBM rows");
  m.hbm_row0 = rph;

  // PE centres: each corner's PEs run west to east at `pitch`.
  const unsigned n_pe = s.pes_per_cube();
  m.pe.resize(n_pe);
  m.pe_x.resize(n_pe);
  m.pe_y.resize(n_pe);
  std::vector<double> xs;
  std::vector<unsigned> pe_row(n_pe);
  for (unsigned c = 0; c < s.corners.size(); ++c) {
    const std::string& corner = s.corners[c];
    bool west = corner[1] == 'W', north = corner[0] == 'N';
    unsigned row = north ? (west ? 0 : std::min(1u, rph - 1)) : (west ? rph + 2 : std::min(rph + 3, 2 * rph + 1));
    for (unsigned i = 0; i < ppc; ++i) {
      unsigned pe = c * ppc + i;
      double x = west ? margin + i * pitch : w - margin - (ppc - 1 - i) * pitch;
      m.pe_x[pe] = x;
      m.pe_y[pe] = m.row_y[row];
      pe_row[pe] = row;
      xs.push_back(x);
    }
  }
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end(), [](double a, double b) { return std::abs(a - b) < 1e-9; }), xs.end());
  // Relay columns keep router spacing at most max_router_spacing_mm.
  for (std::size_t i = 0; i < xs.size(); ++i) {
    m.col_x.push_back(xs[i]);
    if (i + 1 == xs.size()) break;
    double gap = xs[i + 1] - xs[i];
    auto parts = static_cast<unsigned>(std::ceil(gap / s.max_router_spacing_mm - 1e-9));
    for (unsigned k = 1; k < parts; ++k) m.col_x.push_back(xs[i] + gap * k / parts);
  }
  if (m.cols() < 4) fail("the router grid has " + std::to_string(m.cols()) + " columns; the HBM zone needs at least 4");
  m.hbm_col0 = m.cols() / 2 - 1;
  m.present.assign(m.rows() * m.cols(), true);
  for (unsigned r = m.hbm_row0; r < m.hbm_row0 + 2; ++r)
    for (unsigned c = m.hbm_col0; c < m.hbm_col0 + 2; ++c) m.present[r * m.cols() + c] = false;

  for (unsigned pe = 0; pe < n_pe; ++pe) {
    m.pe[pe] = {pe_row[pe], nearest(m.col_x, m.pe_x[pe])};
    if (!m.has(m.pe[pe].row, m.pe[pe].col)) fail("PE " + std::to_string(pe) + " falls into the HBM zone");
  }
  auto closest_router = [&](const std::array<double, 2>& pos) {
    Cell best{0, 0};
    double best_d = 1e300;
    for (unsigned r = 0; r < m.rows(); ++r)
      for (unsigned c = 0; c < m.cols(); ++c) {
        if (!m.has(r, c)) continue;
        double d = std::hypot(m.col_x[c] - pos[0], m.row_y[r] - pos[1]);
        if (d < best_d - 1e-9) {
          best_d = d;
          best = {r, c};
        }
      }
    return best;
  };
  m.m_cpu = closest_router(s.m_cpu_pos_mm);
  m.sram = closest_router(s.sram_pos_mm);

  // UCIe connections: E/W on the edge columns of the PE rows, N/S on the PE columns of the edge rows.
  std::vector<unsigned> pe_rows, pe_cols;
  for (unsigned r = 0; r < m.rows(); ++r)
    if (r < m.hbm_row0 || r >= m.hbm_row0 + 2) pe_rows.push_back(r);
  for (unsigned pe = 0; pe < n_pe; ++pe) pe_cols.push_back(m.pe[pe].col);
  std::sort(pe_cols.begin(), pe_cols.end());
  pe_cols.erase(std::unique(pe_cols.begin(), pe_cols.end()), pe_cols.end());
  const unsigned n = s.ucie_connections, last_row = m.rows() - 1, last_col = m.cols() - 1;
  for (unsigned c : spread(pe_cols, n)) m.ucie[0].push_back({0, c});
  for (unsigned r : spread(pe_rows, n)) m.ucie[1].push_back({r, last_col});
  for (unsigned c : spread(pe_cols, n)) m.ucie[2].push_back({last_row, c});
  for (unsigned r : spread(pe_rows, n)) m.ucie[3].push_back({r, 0});
  return m;
}

}  // namespace kbsim::ahbm_topology
