// From a CCL algorithm's wiring to the PEs' queue tables: direction order and
// rx rings, the reverse-direction rule, and the install-time invariants.
#include "ipcq_install.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using ::testing::HasSubstr;

namespace kbsim::host_runtime {
namespace {

const ahbm::PeRef a{0, 0, 0}, b{0, 1, 0}, c{1, 0, 0};

std::string error_of(const std::vector<ccl::Wire>& wires, const pe::IpcqConfig& cfg = {}) {
  try {
    plan_queues(wires, cfg);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(IpcqInstall, DirectionsTakeRxRingsInAddressOrderAndPairWithTheirOpposites) {
  pe::IpcqConfig cfg;  // 4 slots x 4096 B: 16 KiB per direction
  QueueTables t = plan_queues({{a, "E", b}, {b, "W", a}, {a, "global_E", c}, {c, "global_W", a}}, cfg);
  ASSERT_EQ(t.at(a).size(), 2u);
  const pe::IpcqQueue& e = t.at(a)[0];  // E before global_E: the standard order
  EXPECT_EQ(e.dir, "E");
  EXPECT_EQ(e.peer_dir, "W");
  EXPECT_EQ(e.rx_base, pe::kIpcqBase);
  EXPECT_EQ(e.peer_rx_base, pe::kIpcqBase | std::uint64_t{1} << 32);  // cube 1's first ring
  const pe::IpcqQueue& g = t.at(a)[1];
  EXPECT_EQ(g.rx_base, pe::kIpcqBase + 16384);
  EXPECT_EQ(g.peer_rx_base, pe::kIpcqBase | std::uint64_t{1} << 40);  // SIP 1
}

TEST(IpcqInstall, TwoDirectionsToOnePeerPairCrosswise) {
  // A 2-rank ring: east and west both lead to the other rank (the reference's ADR-0025 case).
  QueueTables t = plan_queues({{a, "global_E", c}, {a, "global_W", c}, {c, "global_E", a}, {c, "global_W", a}}, {});
  EXPECT_EQ(t.at(a)[0].dir, "global_E");
  EXPECT_EQ(t.at(a)[0].peer_dir, "global_W");
  EXPECT_EQ(t.at(a)[1].peer_dir, "global_E");
  EXPECT_EQ(t.at(a)[0].peer_rx_base, t.at(c)[1].rx_base);  // a's east sends land in c's west ring
}

TEST(IpcqInstall, OtherNamesFollowInNameOrderAndPairByName) {
  QueueTables t = plan_queues({{a, "m2", b}, {b, "m0", a}, {a, "m1", c}, {c, "m0", a}}, {});
  EXPECT_EQ(t.at(a)[0].dir, "m1");
  EXPECT_EQ(t.at(a)[1].dir, "m2");
  EXPECT_EQ(t.at(a)[1].peer_dir, "m0");  // the first direction of b pointing back
}

TEST(IpcqInstall, BrokenWiringIsAConfigurationError) {
  EXPECT_THAT(error_of({{a, "E", b}}), HasSubstr("sip0.cube0.pe0 direction E points at sip0.cube1.pe0, which has no "
                                                 "direction pointing back"));
  EXPECT_THAT(error_of({{a, "E", b}, {a, "E", c}}), HasSubstr("direction E points at both"));
  EXPECT_THAT(error_of({{a, "x", b}, {a, "y", b}, {b, "z", a}}), HasSubstr("invariant I3 (one ring per sender)"));
  pe::IpcqConfig big;
  big.slot_size = 4 << 20;  // 4 slots x 4 MiB = 16 MiB per direction: two do not fit a PE's space
  EXPECT_THAT(error_of({{a, "E", b}, {a, "W", c}, {b, "W", a}, {c, "E", a}}, big),
              HasSubstr("invariant I3.1 (disjoint rx rings): sip0.cube0.pe0 has 2 directions"));
  EXPECT_THAT(error_of({{a, "E", a}}), HasSubstr("points at itself"));
}

}  // namespace
}  // namespace kbsim::host_runtime
