// lrab's wiring table and launch (lrab.hpp), without running it: which PE
// sends to which in which direction on small systems (the reference's
// test_intercube_sfr_config), and what a tensor on one cube or on the whole
// cube mesh launches.
#include "lrab.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "kbsim/testing_cli.hpp"

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAreArray;

namespace kbsim::ccl_lrab {
namespace {

Params params(const std::string& root = "center") {
  ParamEntry e;
  e.name = std::string(kRoot.name);
  e.value = root;
  e.origin = "test";
  return Params({e});
}

ccl::SystemShape shape(unsigned sips, ccl::SipTopology t, unsigned sip_w, unsigned sip_h, unsigned cube_w,
                       unsigned cube_h) {
  ccl::SystemShape s;
  s.sips = sips;
  s.topology = t;
  s.sip_w = sip_w;
  s.sip_h = sip_h;
  s.cube_w = cube_w;
  s.cube_h = cube_h;
  s.pes_per_cube = 8;
  return s;
}

std::string pe(const ahbm::PeRef& p) {
  return "sip" + std::to_string(p.sip) + ".cube" + std::to_string(p.cube) + ".pe" + std::to_string(p.pe);
}

/// The wiring as "from dir to" lines.
std::vector<std::string> table(const std::vector<ccl::Wire>& wires) {
  std::vector<std::string> out;
  for (const ccl::Wire& w : wires) out.push_back(pe(w.from) + " " + w.dir + " " + pe(w.to));
  return out;
}

// 2 SIPs on a ring, each a 2 x 2 cube mesh (cubes 0 1 / 2 3): pe0 of every cube talks to its mesh neighbours
// (no wrap) and, in both global directions, to pe0 of the same cube on the other SIP. Nothing else: no other PE,
// no intra_* direction.
TEST(LrabWiring, TwoSipsOfTwoByTwoCubes) {
  const Params p = params();
  const auto wires = Lrab().wiring({shape(2, ccl::SipTopology::kRing1d, 2, 1, 2, 2), 2, p});
  struct MeshWire {
    unsigned from;
    const char* dir;
    unsigned to;
  };
  const MeshWire mesh[] = {{0, "S", 2}, {0, "E", 1}, {1, "S", 3}, {1, "W", 0},
                           {2, "N", 0}, {2, "E", 3}, {3, "N", 1}, {3, "W", 2}};
  std::vector<std::string> want;
  for (unsigned s = 0; s < 2; ++s) {
    for (const MeshWire& m : mesh) want.push_back(pe({s, m.from, 0}) + " " + m.dir + " " + pe({s, m.to, 0}));
    for (unsigned c = 0; c < 4; ++c)
      for (const char* dir : {"global_E", "global_W"})
        want.push_back(pe({s, c, 0}) + " " + dir + " " + pe({1 - s, c, 0}));
  }
  ASSERT_EQ(want.size(), 32u);
  EXPECT_THAT(table(wires), UnorderedElementsAreArray(want));
}

/// Every wire's peer has a wire pointing back (kbsim's install refuses one without).
bool every_wire_points_back(const std::vector<ccl::Wire>& wires) {
  std::set<std::pair<std::string, std::string>> from_to;
  for (const ccl::Wire& w : wires) from_to.insert({pe(w.from), pe(w.to)});
  for (const ccl::Wire& w : wires)
    if (!from_to.count({pe(w.to), pe(w.from)})) return false;
  return true;
}

// 6 SIPs on a 3 x 2 torus, each a column of 2 cubes: every cube's pe0 has its one mesh neighbour and the four
// global directions of its SIP (3 x 2: north and south lead to the same SIP).
TEST(LrabWiring, SixSipsOnATorusWireEveryCubeToItsTwinOnTheNeighbouringSips) {
  const Params p = params();
  const auto wires = Lrab().wiring({shape(6, ccl::SipTopology::kTorus2d, 3, 2, 1, 2), 6, p});
  EXPECT_EQ(wires.size(), 6u * 2 * (1 + 4));
  const std::vector<std::string> t = table(wires);
  const std::set<std::string> all(t.begin(), t.end());
  for (const char* w :
       {"sip4.cube1.pe0 N sip4.cube0.pe0", "sip4.cube0.pe0 S sip4.cube1.pe0", "sip4.cube1.pe0 global_E sip5.cube1.pe0",
        "sip4.cube1.pe0 global_W sip3.cube1.pe0", "sip4.cube1.pe0 global_S sip1.cube1.pe0",
        "sip4.cube1.pe0 global_N sip1.cube1.pe0", "sip2.cube0.pe0 global_E sip0.cube0.pe0"})
    EXPECT_TRUE(all.count(w)) << w;
  for (const ccl::Wire& w : wires) {
    EXPECT_EQ(w.from.pe, 0u);
    EXPECT_EQ(w.to.pe, 0u);
    const bool global = w.dir.rfind("global_", 0) == 0;
    EXPECT_EQ(global ? w.from.cube : w.from.sip, global ? w.to.cube : w.to.sip) << pe(w.from) << " " << w.dir;
  }
  EXPECT_TRUE(every_wire_points_back(wires));
}

TEST(LrabWiring, AMeshCornerSipHasOnlyTwoGlobalDirections) {
  const Params p = params();
  const auto wires = Lrab().wiring({shape(6, ccl::SipTopology::kMesh2dNoWrap, 3, 2, 1, 1), 6, p});
  std::vector<std::string> sip0;
  for (const std::string& w : table(wires))
    if (w.rfind("sip0.", 0) == 0) sip0.push_back(w);
  EXPECT_THAT(sip0, UnorderedElementsAreArray(
                        {"sip0.cube0.pe0 global_E sip1.cube0.pe0", "sip0.cube0.pe0 global_S sip3.cube0.pe0"}));
  EXPECT_EQ(wires.size(), 14u);  // 7 links of the 3 x 2 grid, both ways
  EXPECT_TRUE(every_wire_points_back(wires));
}

TEST(LrabWiring, ARootThatIsNeitherCenterNorCornerIsRefused) {
  const Params p = params("middle");
  EXPECT_THAT(testkit::config_error([&] {
                Lrab().wiring({shape(2, ccl::SipTopology::kRing1d, 2, 1, 2, 2), 2, p});
              }),
              HasSubstr("parameter 'root' must be center or corner, got 'middle'"));
}

// A tensor on one cube: the runtime passes a 1 x 1 cube grid (docs/model.md, "Algorithms"), and lrab launches on
// that one cube, straight to the inter-SIP exchange, whatever the SIP's cube mesh.
TEST(LrabLaunch, ATensorOnOneCubeLaunchesOnOneCube) {
  const Params p = params();
  const ccl::Setup setup{shape(2, ccl::SipTopology::kRing1d, 2, 1, 4, 4), 2, p};
  const ccl::Launch l = Lrab().launch({setup, 1, 256, DType::kF16, 1, 1});
  EXPECT_EQ(l.kernel, "lrab-allreduce");
  EXPECT_EQ(l.grid_cubes, 1u);
  EXPECT_EQ(l.grid_pes, 1u);
  EXPECT_EQ(l.args, ccl::pack(LrabArgs{1, 1, 0, 0, 0, 0}));  // ring: no SIP grid
  EXPECT_EQ(Lrab().min_slot_size({setup, 1, 256, DType::kF16, 1, 1}), 512u);
}

TEST(LrabLaunch, ATensorOnTheWholeMeshLaunchesOnEveryCube) {
  const Params p = params("corner");
  const ccl::Setup setup{shape(6, ccl::SipTopology::kTorus2d, 3, 2, 4, 4), 6, p};
  const ccl::Launch l = Lrab().launch({setup, 0, 49152, DType::kF16, 4, 4});
  EXPECT_EQ(l.grid_cubes, 16u);
  EXPECT_EQ(l.args, ccl::pack(LrabArgs{4, 4, 1, 3, 2, 1}));  // torus_2d 3 x 2, corner root
}

}  // namespace
}  // namespace kbsim::ccl_lrab
