// Ports declare the message types they accept: a message of another type is
// a simulation error naming the receiver, the sender, the port and the types.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

// An endpoint sends its own packets straight into an HBM controller's request port.
const char* kMiswired = R"(
nodes:
  - { id: e, impl: builtin.endpoint, params: { send_to: h, send_bytes: 256 } }
  - { id: h, impl: builtin.hbm_ctrl }
edges:
  - { src: e, dst: h, bandwidth_gbs: 64, latency_ns: 1, kind: router_to_hbm }
  - { src: h, dst: e, bandwidth_gbs: 64, latency_ns: 1, kind: hbm_to_router }
)";

TEST(PortTypes, AMessageOfAnUndeclaredTypeNamesBothEndsThePortAndTheAcceptedTypes) {
  auto sys = test::build_system(test::shared_registry(), kMiswired);
  try {
    sys->run();
    ADD_FAILURE() << "expected a SimError";
  } catch (const SimError& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, HasSubstr("t=0 ns: h: is sent a message of type id "));
    EXPECT_THAT(what, HasSubstr("by e (builtin.endpoint) on its 'router_to_hbm' port, which accepts only "
                                "ahbm.MemRequest"));
    EXPECT_EQ(what.find('\n'), std::string::npos) << "one line";
  }
}

TEST(PortTypes, PortsWithoutDeclaredTypesTakeAnything) {
  // The same endpoint into another endpoint (ports "*", no types): delivered.
  auto sys = test::build_system(test::shared_registry(), R"(
nodes:
  - { id: e, impl: builtin.endpoint, params: { send_to: f, send_bytes: 256 } }
  - { id: f, impl: builtin.endpoint }
edges:
  - { src: e, dst: f, bandwidth_gbs: 64, latency_ns: 1, bidir: true }
)");
  sys->run();
  sys->finish();
  EXPECT_EQ(sys->stat("f", "received").count, 1u);
}

}  // namespace
}  // namespace kbsim
