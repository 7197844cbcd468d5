// custom.store_forward in isolation, with the SDK's component-under-test
// harness: it holds a message until its last flit is in, then sends it whole.
// Compare forwarding_test.cpp: the same line through the wormhole switch
// delivers at 77 ns.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kbsim/testing_mock.hpp"

namespace kbsim {
namespace {

using ::testing::_;
using ::testing::StrictMock;

using testkit::MockNeighbour;
using testkit::packet;

constexpr Tick ns(Tick n) { return n * kPsPerNs; }

/// a -> store_forward (overhead 5 ns) -> b, 64 GB/s (4 ns per 256 B flit) and 2 ns each way.
class StoreForwardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h.component("custom.store_forward", {{"overhead_ns", 5.0}});
    h.neighbour("a", "link", a, {64, 2}, {64, 2});
    h.neighbour("b", "link", b, {64, 2}, {64, 2});
    h.build();
  }
  testkit::Harness h;
  StrictMock<MockNeighbour> a, b;
};

TEST_F(StoreForwardTest, TheWholeMessageIsReceivedBeforeItIsSentOn) {
  // In at 16 x 4 + 2 = 66 ns, +5 overhead = 71, out in 16 x 4 + 2 = 66 more: 137 ns.
  EXPECT_CALL(b, received(ns(137), _));
  h.inject(0, "a", packet(4096), "b");
  h.run();
  EXPECT_EQ(h.stat("transactions").count, 1u);
  EXPECT_EQ(h.stat("bytes").count, 4096u);
}

TEST_F(StoreForwardTest, OneWorkerPaysTheOverheadOfEachMessageInTurn) {
  // Two 256 B messages from a on one link: in at 6 and 10 ns. The worker sends the
  // first at 6 + 5 = 11, the second at max(10, 11) + 5 = 16; each takes 4 + 2 ns to b.
  ::testing::InSequence order;
  EXPECT_CALL(b, received(ns(17), _));
  EXPECT_CALL(b, received(ns(22), _));
  h.inject(0, "a", packet(256), "b");
  h.inject(0, "a", packet(256), "b");
  h.run();
}

}  // namespace
}  // namespace kbsim
