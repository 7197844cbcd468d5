// vendor_switch in isolation, against the installed SDK's component-under-test
// harness (kbsim/testing.hpp): two GoogleMock neighbours, a packet injected at
// a chosen time, its arrival asserted to the picosecond. A wrong expectation
// (or a stray message to a StrictMock) fails the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kbsim/testing_mock.hpp"

namespace {

using kbsim::Tick;
using ::testing::_;
using ::testing::Field;
using ::testing::StrictMock;

using kbsim::testkit::MockNeighbour;

constexpr Tick ns(Tick n) { return n * kbsim::kPsPerNs; }

// Built with -DVENDOR_SWITCH_WRONG_EXPECTATION (tests/sdk/out_of_tree.sh does),
// the first test expects the packet 1 ns late and must fail.
#ifdef VENDOR_SWITCH_WRONG_EXPECTATION
constexpr Tick kSkew = 1;
#else
constexpr Tick kSkew = 0;
#endif

class VendorSwitchTest : public ::testing::Test {
 protected:
  VendorSwitchTest() : h({.plugin_dirs = {VENDOR_PLUGIN_DIR}}) {}
  /// a -> vendor_switch -> b, 32 GB/s (8 ns per 256 B flit) and 1 ns each way.
  void build(double overhead_ns, double pipeline_ns) {
    h.component_type("vendor_switch", "vendor_switch", {{"overhead_ns", overhead_ns}, {"pipeline_ns", pipeline_ns}});
    h.neighbour("a", "link", a, {32, 1}, {32, 1});
    h.neighbour("b", "link", b, {32, 1}, {32, 1});
    h.build();
  }
  kbsim::testkit::Harness h;
  StrictMock<MockNeighbour> a, b;
};

TEST_F(VendorSwitchTest, ThePipelineDelaysEveryFlitButNotTheStream) {
  // 1024 B = 4 flits. The head reaches the switch at 8 + 1 = 9 ns, pays the
  // 2 ns overhead and the 3 ns pipeline, crosses to b at 14 + 8 + 1 = 23 ns;
  // the other three flits follow at the link's pace: delivered at 23 + 3 x 8 = 47 ns.
  build(2.0, 3.0);
  EXPECT_CALL(b, received(ns(47 + kSkew), Field(&kbsim::Message::bytes, 1024u)));
  h.inject(0, "a", kbsim::testkit::packet(1024), "b");
  h.run();
  EXPECT_EQ(h.stat("transactions").count, 1u);
}

TEST_F(VendorSwitchTest, WithoutAPipelineItIsAPlainWormholeSwitch) {
  build(2.0, 0.0);
  EXPECT_CALL(b, received(ns(44), _));  // the worked example of docs/architecture.md
  h.inject(0, "a", kbsim::testkit::packet(1024), "b");
  h.run();
}

}  // namespace
