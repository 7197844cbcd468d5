// The reference's neighbour patterns (its ccl/topologies module; docs/model.md,
// "Algorithms"): for rank `rank` of a world of `world` ranks, its neighbour in
// each direction, as {direction: peer rank}. A CCL algorithm's wiring
// (ccl::Algorithm::wiring, kbsim/pe/ccl.hpp) turns such a table into wires
// between the PEs it uses; ccl::sip_neighbors is ring_1d / torus_2d /
// mesh_2d_no_wrap over the system's SIP grid, with the inter-SIP names
// (global_E for E, and so on).
//
//   for (unsigned r = 0; r < world; ++r)
//     for (const auto& [dir, peer] : kbsim::ccl::topo::tree_binary(r, world))
//       wires.push_back({{r, 0, 0}, dir, {peer, 0, 0}});
//
// `rank` must be below `world`. The 2-D patterns lay ranks out row-major on a
// w x h grid (rank = y * w + x): E is x + 1, W x - 1, S y + 1 (the next row),
// N y - 1. A rank never neighbours itself: a world of one rank, or a grid
// dimension of one, gives no neighbour along it (modular formulas would
// name the rank itself, which no queue can use).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "kbsim/errors.hpp"

namespace kbsim::ccl::topo {

/// direction -> peer rank
using Neighbors = std::map<std::string, unsigned>;

/// The reference's pattern names, in its order.
inline constexpr std::string_view kNames[] = {"ring_1d",  "ring_1d_unidir",  "mesh_2d",
                                              "torus_2d", "mesh_2d_no_wrap", "tree_binary"};

/// A 2-D grid of ranks: w columns, h rows.
struct Grid {
  unsigned w = 0, h = 0;
  bool operator==(const Grid&) const = default;
};

/// The grid of a 2-D pattern over `world` ranks: `w` x `h` when given (both, and w * h must be `world`), else
/// (both 0) the square one, which needs a square `world`. ConfigError otherwise (the reference's SIP grid rule).
inline Grid grid(unsigned world, unsigned w = 0, unsigned h = 0) {
  const std::string n = std::to_string(world);
  if ((w == 0) != (h == 0)) throw ConfigError("a 2-D CCL topology needs both w and h, or neither");
  if (w != 0) {
    if (static_cast<unsigned long long>(w) * h != world)
      throw ConfigError("a " + std::to_string(w) + "x" + std::to_string(h) + " grid does not hold " + n + " ranks");
    return {w, h};
  }
  unsigned side = 0;
  while (static_cast<unsigned long long>(side + 1) * (side + 1) <= world) ++side;
  if (side * side != world) throw ConfigError(n + " ranks make no square grid: a 2-D CCL topology needs w and h");
  return {side, side};
}

/// ring_1d: E to the next rank, W to the previous one, around the ring. In a ring of two both are the other rank
/// (the reference's ADR-0025 case, which the reverse-direction rule pairs crosswise).
inline Neighbors ring_1d(unsigned rank, unsigned world) {
  if (world < 2) return {};
  return {{"E", (rank + 1) % world}, {"W", (rank + world - 1) % world}};
}

/// ring_1d_unidir: a one-way ring, E to the next rank only. In a ring of more than two nothing points back along
/// an E, and kbsim's install needs a direction pointing back at every sender (docs/model.md, "IPCQ"): a wiring
/// built on it gives each receiving rank a direction to its sender as well (W, as ring_1d has).
inline Neighbors ring_1d_unidir(unsigned rank, unsigned world) {
  if (world < 2) return {};
  return {{"E", (rank + 1) % world}};
}

namespace detail {
/// The 2-D grid neighbours of `rank`, around the edges or not.
inline Neighbors grid_2d(unsigned rank, unsigned world, unsigned w, unsigned h, bool wrap) {
  const Grid g = grid(world, w, h);
  const unsigned x = rank % g.w, y = rank / g.w;
  auto at = [&](unsigned xx, unsigned yy) { return yy * g.w + xx; };
  Neighbors out;
  if (g.w > 1 && (wrap || x + 1 < g.w)) out["E"] = at((x + 1) % g.w, y);
  if (g.w > 1 && (wrap || x > 0)) out["W"] = at((x + g.w - 1) % g.w, y);
  if (g.h > 1 && (wrap || y + 1 < g.h)) out["S"] = at(x, (y + 1) % g.h);
  if (g.h > 1 && (wrap || y > 0)) out["N"] = at(x, (y + g.h - 1) % g.h);
  return out;
}
}  // namespace detail

/// torus_2d: the grid's four neighbours, wrapping around both edges (a row or column of two has the same peer
/// both ways). `w`, `h`: the grid (0, 0: square; see grid()).
inline Neighbors torus_2d(unsigned rank, unsigned world, unsigned w = 0, unsigned h = 0) {
  return detail::grid_2d(rank, world, w, h, true);
}

/// mesh_2d: the reference's first 2-D pattern, older than torus_2d and mesh_2d_no_wrap. The documents do not
/// spell it out; kbsim reads it as wrapping (the non-wrapping variant was added beside it under the name
/// mesh_2d_no_wrap), so its neighbours are torus_2d's.
inline Neighbors mesh_2d(unsigned rank, unsigned world, unsigned w = 0, unsigned h = 0) {
  return detail::grid_2d(rank, world, w, h, true);
}

/// mesh_2d_no_wrap: the grid's neighbours without wrapping; an edge rank has none beyond its edge.
inline Neighbors mesh_2d_no_wrap(unsigned rank, unsigned world, unsigned w = 0, unsigned h = 0) {
  return detail::grid_2d(rank, world, w, h, false);
}

/// tree_binary: a binary tree in heap order, rank 0 the root: `parent` (rank - 1) / 2 for every rank but the root,
/// `child0` 2 * rank + 1 and `child1` 2 * rank + 2 where they exist. No direction has an opposite: the
/// reverse-direction rule pairs a parent's child direction with that child's `parent`.
inline Neighbors tree_binary(unsigned rank, unsigned world) {
  Neighbors out;
  if (rank > 0) out["parent"] = (rank - 1) / 2;
  const unsigned long long first = 2ULL * rank + 1;
  if (first < world) out["child0"] = static_cast<unsigned>(first);
  if (first + 1 < world) out["child1"] = static_cast<unsigned>(first + 1);
  return out;
}

/// The pattern named `name` (one of kNames); `w`, `h` for the 2-D ones (ignored by the others). ConfigError for
/// another name.
inline Neighbors neighbors(std::string_view name, unsigned rank, unsigned world, unsigned w = 0, unsigned h = 0) {
  if (name == "ring_1d") return ring_1d(rank, world);
  if (name == "ring_1d_unidir") return ring_1d_unidir(rank, world);
  if (name == "mesh_2d") return mesh_2d(rank, world, w, h);
  if (name == "torus_2d") return torus_2d(rank, world, w, h);
  if (name == "mesh_2d_no_wrap") return mesh_2d_no_wrap(rank, world, w, h);
  if (name == "tree_binary") return tree_binary(rank, world);
  std::string known;
  for (std::string_view k : kNames) known += (known.empty() ? "" : ", ") + std::string(k);
  throw ConfigError("no CCL topology named '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace kbsim::ccl::topo
