// The neighbour patterns a CCL algorithm wires with: the reference's six
// (kbsim/pe/ccl_topologies.hpp) and ccl::sip_neighbors (kbsim/pe/ccl.hpp),
// which lrab wires between SIPs. Rectangular SIP grids both ways round, the
// square fallback as the topology front-end publishes it, and which patterns
// kbsim's install can pair (every direction needs one pointing back).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "kbsim/pe/ccl.hpp"
#include "kbsim/pe/ccl_topologies.hpp"
#include "kbsim/testing.hpp"
#include "kbsim/testing_cli.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

namespace topo = ccl::topo;
using Table = std::vector<topo::Neighbors>;  ///< every rank's neighbours, by rank

ccl::SystemShape sip_grid(ccl::SipTopology t, unsigned w, unsigned h) {
  ccl::SystemShape s;
  s.sips = w * h;
  s.sip_w = w;
  s.sip_h = h;
  s.topology = t;
  return s;
}

/// `n` with the inter-SIP names (E -> global_E).
topo::Neighbors global(const topo::Neighbors& n) {
  topo::Neighbors out;
  for (const auto& [dir, peer] : n) out["global_" + dir] = peer;
  return out;
}

Table sip_table(const ccl::SystemShape& s, unsigned world) {
  Table t;
  for (unsigned r = 0; r < world; ++r) t.push_back(ccl::sip_neighbors(s, world, r));
  return t;
}

/// Every rank's neighbours by the pattern named `name`.
Table topo_table(std::string_view name, unsigned world, unsigned w = 0, unsigned h = 0) {
  Table t;
  for (unsigned r = 0; r < world; ++r) t.push_back(topo::neighbors(name, r, world, w, h));
  return t;
}

Table global(const Table& t) {
  Table out;
  for (const auto& n : t) out.push_back(global(n));
  return out;
}

/// 2 columns x 3 rows:  0 1 / 2 3 / 4 5.
const Table kTorus2x3 = {{{"E", 1}, {"W", 1}, {"S", 2}, {"N", 4}}, {{"E", 0}, {"W", 0}, {"S", 3}, {"N", 5}},
                         {{"E", 3}, {"W", 3}, {"S", 4}, {"N", 0}}, {{"E", 2}, {"W", 2}, {"S", 5}, {"N", 1}},
                         {{"E", 5}, {"W", 5}, {"S", 0}, {"N", 2}}, {{"E", 4}, {"W", 4}, {"S", 1}, {"N", 3}}};
const Table kMesh2x3 = {{{"E", 1}, {"S", 2}},           {{"W", 0}, {"S", 3}}, {{"E", 3}, {"S", 4}, {"N", 0}},
                        {{"W", 2}, {"S", 5}, {"N", 1}}, {{"E", 5}, {"N", 2}}, {{"W", 4}, {"N", 3}}};
/// 3 columns x 2 rows:  0 1 2 / 3 4 5.
const Table kTorus3x2 = {{{"E", 1}, {"W", 2}, {"S", 3}, {"N", 3}}, {{"E", 2}, {"W", 0}, {"S", 4}, {"N", 4}},
                         {{"E", 0}, {"W", 1}, {"S", 5}, {"N", 5}}, {{"E", 4}, {"W", 5}, {"S", 0}, {"N", 0}},
                         {{"E", 5}, {"W", 3}, {"S", 1}, {"N", 1}}, {{"E", 3}, {"W", 4}, {"S", 2}, {"N", 2}}};
const Table kMesh3x2 = {{{"E", 1}, {"S", 3}}, {{"E", 2}, {"W", 0}, {"S", 4}}, {{"W", 1}, {"S", 5}},
                        {{"E", 4}, {"N", 0}}, {{"E", 5}, {"W", 3}, {"N", 1}}, {{"W", 4}, {"N", 2}}};

TEST(SipNeighbors, RectangularGridsBothWaysRound) {
  using T = ccl::SipTopology;
  EXPECT_EQ(sip_table(sip_grid(T::kTorus2d, 2, 3), 6), global(kTorus2x3));
  EXPECT_EQ(sip_table(sip_grid(T::kMesh2dNoWrap, 2, 3), 6), global(kMesh2x3));
  EXPECT_EQ(sip_table(sip_grid(T::kTorus2d, 3, 2), 6), global(kTorus3x2));
  EXPECT_EQ(sip_table(sip_grid(T::kMesh2dNoWrap, 3, 2), 6), global(kMesh3x2));
  // The names lrab's kernel sends on: rank 0 of the 2 x 3 torus reaches rank 4 going north (round the edge).
  EXPECT_EQ(ccl::sip_neighbors(sip_grid(T::kTorus2d, 2, 3), 6, 0).at("global_N"), 4u);
}

TEST(SipNeighbors, ARingIsTheWorldInOrder) {
  ccl::SystemShape s;
  s.sips = 6;
  s.sip_w = 6;
  EXPECT_EQ(ccl::sip_neighbors(s, 6, 0), (topo::Neighbors{{"global_E", 1}, {"global_W", 5}}));
  EXPECT_EQ(ccl::sip_neighbors(s, 6, 5), (topo::Neighbors{{"global_E", 0}, {"global_W", 4}}));
  // A world smaller than the SIP count (ccl.world_size) is a ring of its own; two ranks meet both ways.
  EXPECT_EQ(ccl::sip_neighbors(s, 2, 0), (topo::Neighbors{{"global_E", 1}, {"global_W", 1}}));
  EXPECT_TRUE(ccl::sip_neighbors(s, 1, 0).empty());
}

// The reference's back-compatibility case: 4 SIPs on a torus with no w and h are a 2 x 2 square, as the topology
// front-end publishes it; 6 would be ambiguous and are refused.
TEST(SipNeighbors, FourSipsOnATorusWithoutWAndHAreASquare) {
  const testkit::Plugins plugins;
  const auto file = std::filesystem::path(KBSIM_SOURCE_DIR) / "topology.yaml";
  const Graph g = plugins.load_topology(file, {"system.sips.count=4", "system.sips.topology=torus_2d"});
  const ccl::SystemShape s = ccl::SystemShape::from(g.attrs);
  EXPECT_EQ(s.topology, ccl::SipTopology::kTorus2d);
  EXPECT_EQ(s.sip_w, 2u);
  EXPECT_EQ(s.sip_h, 2u);
  const Table square = {{{"E", 1}, {"W", 1}, {"S", 2}, {"N", 2}},
                        {{"E", 0}, {"W", 0}, {"S", 3}, {"N", 3}},
                        {{"E", 3}, {"W", 3}, {"S", 0}, {"N", 0}},
                        {{"E", 2}, {"W", 2}, {"S", 1}, {"N", 1}}};
  EXPECT_EQ(sip_table(s, 4), global(square));
  EXPECT_EQ(topo_table("torus_2d", 4), square);  // the helpers' own fallback agrees
  EXPECT_THAT(testkit::config_error([&] {
                plugins.load_topology(file, {"system.sips.count=6", "system.sips.topology=torus_2d"});
              }),
              HasSubstr("torus_2d over 6 SIPs needs system.sips.w and h (the count is not a square)"));
}

TEST(CclTopologies, SipNeighborsAreTheReferencePatternsWithGlobalNames) {
  using T = ccl::SipTopology;
  for (unsigned world = 1; world <= 7; ++world) {
    ccl::SystemShape ring;
    ring.sips = ring.sip_w = 7;
    EXPECT_EQ(sip_table(ring, world), global(topo_table("ring_1d", world))) << world;
  }
  const std::vector<std::pair<unsigned, unsigned>> grids = {{2, 3}, {3, 2}, {2, 2}, {1, 4}, {4, 1}, {3, 3}};
  for (const auto& [w, h] : grids) {
    EXPECT_EQ(sip_table(sip_grid(T::kTorus2d, w, h), w * h), global(topo_table("torus_2d", w * h, w, h)));
    EXPECT_EQ(sip_table(sip_grid(T::kMesh2dNoWrap, w, h), w * h), global(topo_table("mesh_2d_no_wrap", w * h, w, h)));
  }
  EXPECT_EQ(topo_table("torus_2d", 6, 2, 3), kTorus2x3);
  EXPECT_EQ(topo_table("mesh_2d_no_wrap", 6, 3, 2), kMesh3x2);
}

TEST(CclTopologies, Rings) {
  EXPECT_EQ(topo::ring_1d(0, 6), (topo::Neighbors{{"E", 1}, {"W", 5}}));
  EXPECT_EQ(topo::ring_1d(0, 2), (topo::Neighbors{{"E", 1}, {"W", 1}}));  // the reference's ADR-0025 case
  EXPECT_TRUE(topo::ring_1d(0, 1).empty());
  EXPECT_EQ(topo::ring_1d_unidir(0, 6), (topo::Neighbors{{"E", 1}}));
  EXPECT_EQ(topo::ring_1d_unidir(5, 6), (topo::Neighbors{{"E", 0}}));
  EXPECT_EQ(topo::ring_1d_unidir(1, 2), (topo::Neighbors{{"E", 0}}));
  EXPECT_TRUE(topo::ring_1d_unidir(0, 1).empty());
}

// mesh_2d is the reference's first 2-D pattern; it wraps (the non-wrapping one is mesh_2d_no_wrap).
TEST(CclTopologies, Mesh2dWrapsLikeTheTorus) {
  EXPECT_EQ(topo_table("mesh_2d", 6, 2, 3), kTorus2x3);
  EXPECT_EQ(topo_table("mesh_2d", 6, 3, 2), kTorus3x2);
  EXPECT_EQ(topo::mesh_2d(4, 9), (topo::Neighbors{{"E", 5}, {"W", 3}, {"S", 7}, {"N", 1}}));  // 3 x 3 by default
  EXPECT_EQ(topo::mesh_2d(0, 9), (topo::Neighbors{{"E", 1}, {"W", 2}, {"S", 3}, {"N", 6}}));
  EXPECT_EQ(topo::mesh_2d_no_wrap(0, 9), (topo::Neighbors{{"E", 1}, {"S", 3}}));
  EXPECT_EQ(topo::mesh_2d(2, 4, 4, 1), (topo::Neighbors{{"E", 3}, {"W", 1}}));  // one row: no N or S
}

TEST(CclTopologies, TreeBinaryInHeapOrder) {
  const Table seven = {{{"child0", 1}, {"child1", 2}},
                       {{"parent", 0}, {"child0", 3}, {"child1", 4}},
                       {{"parent", 0}, {"child0", 5}, {"child1", 6}},
                       {{"parent", 1}},
                       {{"parent", 1}},
                       {{"parent", 2}},
                       {{"parent", 2}}};
  EXPECT_EQ(topo_table("tree_binary", 7), seven);
  EXPECT_EQ(topo::tree_binary(2, 6), (topo::Neighbors{{"parent", 0}, {"child0", 5}}));
  EXPECT_TRUE(topo::tree_binary(0, 1).empty());
}

TEST(CclTopologies, GridsAreGivenOrSquare) {
  EXPECT_EQ(topo::grid(4), (topo::Grid{2, 2}));
  EXPECT_EQ(topo::grid(9), (topo::Grid{3, 3}));
  EXPECT_EQ(topo::grid(6, 3, 2), (topo::Grid{3, 2}));
  EXPECT_EQ(testkit::config_error([] { topo::grid(6); }),
            "6 ranks make no square grid: a 2-D CCL topology needs w and h");
  EXPECT_EQ(testkit::config_error([] { topo::torus_2d(0, 6, 2, 2); }), "a 2x2 grid does not hold 6 ranks");
  EXPECT_EQ(testkit::config_error([] { topo::mesh_2d(0, 6, 3); }), "a 2-D CCL topology needs both w and h, or neither");
  EXPECT_THAT(testkit::config_error([] { topo::neighbors("hypercube", 0, 8); }),
              HasSubstr("no CCL topology named 'hypercube' (known: ring_1d, ring_1d_unidir, mesh_2d, torus_2d, "
                        "mesh_2d_no_wrap, tree_binary)"));
}

/// The directions of `t` whose peer has no direction pointing back (kbsim's install refuses them).
std::vector<std::string> unpaired(const Table& t) {
  std::vector<std::string> out;
  for (unsigned r = 0; r < t.size(); ++r)
    for (const auto& [dir, peer] : t[r]) {
      bool back = false;
      for (const auto& [d, p] : t.at(peer)) back = back || p == r;
      if (!back) out.push_back(std::to_string(r) + " " + dir);
    }
  return out;
}

TEST(CclTopologies, EveryPatternButTheOneWayRingCanBeInstalledAsItIs) {
  for (std::string_view name : topo::kNames)
    for (unsigned world : {2u, 4u, 7u, 9u}) {
      const bool grid = name.find("2d") != std::string_view::npos;
      if (grid && world % 2 && world != 9) continue;  // 7 ranks make no grid without w and h
      const Table t = grid && world == 2 ? topo_table(name, 2, 2, 1) : topo_table(name, world);
      if (name == "ring_1d_unidir" && world > 2)
        EXPECT_EQ(unpaired(t).size(), world) << name << " " << world;  // every E: its receiver needs a W
      else
        EXPECT_TRUE(unpaired(t).empty()) << name << " " << world << ": " << ::testing::PrintToString(unpaired(t));
    }
}

}  // namespace
}  // namespace kbsim
