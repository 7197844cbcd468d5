// builtin.forwarding in isolation, with the SDK's component-under-test
// harness (kbsim/testing.hpp): GoogleMock neighbours on two links, messages
// injected at chosen times, exact arrival times asserted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kbsim/testing_mock.hpp"

namespace kbsim {
namespace {

using ::testing::_;
using ::testing::Field;
using ::testing::StrictMock;

using testkit::MockNeighbour;
using testkit::packet;

constexpr Tick ns(Tick n) { return n * kPsPerNs; }

/// a -> forwarding -> b: a's link 64 GB/s (4 ns per 256 B flit), b's `b_gbs`, 2 ns each way.
class ForwardingHarness : public ::testing::Test {
 protected:
  void build(double overhead_ns, double pipeline_ns, double b_gbs) {
    h.component("builtin.forwarding", {{"overhead_ns", overhead_ns}, {"pipeline_ns", pipeline_ns}});
    h.neighbour("a", "link", a, {64, 2}, {64, 2});
    h.neighbour("b", "link", b, {b_gbs, 2}, {b_gbs, 2});
    h.build();
  }
  testkit::Harness h;
  StrictMock<MockNeighbour> a, b;
};

/// Overhead 5 ns, both links 64 GB/s.
class ForwardingTest : public ForwardingHarness {
 protected:
  void SetUp() override { build(5.0, 0.0, 64); }
};

TEST_F(ForwardingTest, AMessageArrivesWhenItsTailHasStreamedThrough) {
  // 16 flits. Head: at the forwarder at 6 ns, +5 overhead, on the wire 11..15,
  // at b at 17; the tail streams 15 x 4 ns behind it: delivered at 77 ns.
  EXPECT_CALL(b, received(ns(77), Field(&Message::bytes, 4096u)));
  h.inject(0, "a", packet(4096), "b");
  h.run();
  EXPECT_EQ(h.stat("transactions").count, 1u);
  EXPECT_EQ(h.stat("flits").count, 16u);
}

TEST_F(ForwardingTest, TheSecondMessageQueuesBehindTheFirst) {
  // Both leave a at 0 on one link: the second's head follows the first's 16
  // flits, reaching the forwarder at 64 + 4 + 2 = 70 ns; it pays its own
  // overhead (75), crosses to b (75 + 4 + 2 = 81) and its tail streams
  // 15 x 4 ns behind: delivered at 141 ns.
  ::testing::InSequence order;
  EXPECT_CALL(b, received(ns(77), _));
  EXPECT_CALL(b, received(ns(141), _));
  h.inject(0, "a", packet(4096), "b");
  h.inject(0, "a", packet(4096), "b");
  h.run();
}

TEST_F(ForwardingTest, AControlMessagePaysLatenciesAndTheOverheadOnly) {
  EXPECT_CALL(a, received(ns(100 + 9), Field(&Message::bytes, 0u)));
  h.inject(ns(100), "b", packet(0), "a");
  h.run();
}

TEST_F(ForwardingTest, AMessageWithoutARouteIsASimulationErrorNamingTheComponent) {
  h.inject(0, "a", packet(256));
  try {
    h.run();
    ADD_FAILURE() << "expected a SimError";
  } catch (const SimError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("dut"));
  }
}

/// The forwarder's 5 ns as a per-flit pipeline (`pipeline_ns`) or as a per-transaction overhead, and a link to b
/// twice as fast (2 ns per flit) as the one from a.
class PipelineTest : public ForwardingHarness {
 protected:
  void build(double overhead_ns, double pipeline_ns) { ForwardingHarness::build(overhead_ns, pipeline_ns, 128); }
};

TEST_F(PipelineTest, EveryFlitSpendsThePipelineSoTheTailDoesToo) {
  // Flit k reaches the forwarder at 4k + 6 ns and leaves 5 ns later; the faster link never queues it: the tail
  // (k = 15) is at b at 66 + 5 + 2 + 2 = 75 ns.
  build(0.0, 5.0);
  EXPECT_CALL(b, received(ns(75), Field(&Message::bytes, 4096u)));
  h.inject(0, "a", packet(4096), "b");
  h.run();
}

TEST_F(PipelineTest, AnOverheadDelaysOnlyTheHeadSoTheTailCatchesUp) {
  // The same 5 ns as an overhead: the head leaves at 11 ns, the flits behind it at once when they arrive; the tail
  // arrives at 66 and is at b at 70 ns.
  build(5.0, 0.0);
  EXPECT_CALL(b, received(ns(70), Field(&Message::bytes, 4096u)));
  h.inject(0, "a", packet(4096), "b");
  h.run();
}

TEST_F(PipelineTest, AControlMessageSpendsThePipelineToo) {
  build(0.0, 5.0);
  EXPECT_CALL(a, received(ns(100 + 9), Field(&Message::bytes, 0u)));
  h.inject(ns(100), "b", packet(0), "a");
  h.run();
}

}  // namespace
}  // namespace kbsim
