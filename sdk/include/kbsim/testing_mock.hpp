// The component-under-test harness with a GoogleMock neighbour: expect what
// arrives, and when.
//
//   ::testing::StrictMock<kbsim::testkit::MockNeighbour> b;
//   EXPECT_CALL(b, received(kbsim::ns_to_ticks(77), ::testing::_));
#pragma once

#include <gmock/gmock.h>

#include "kbsim/testing.hpp"

namespace kbsim::testkit {

struct MockNeighbour : Neighbour {
  MOCK_METHOD(void, received, (Tick at, Message& msg), (override));
};

}  // namespace kbsim::testkit
