// A GoogleMock component standing in for a neighbour: registered in-process
// next to the real plugins, it checks what real components deliver to it and
// when, and can answer like a real neighbour would.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::_;
using ::testing::Eq;
using ::testing::StrictMock;

namespace kbsim {
namespace {

constexpr Tick ns(Tick n) { return n * kPsPerNs; }

class MockNeighbour : public Component {
 public:
  explicit MockNeighbour(const ComponentContext& ctx) : Component(ctx) { instance = this; }
  ~MockNeighbour() override {
    if (instance == this) instance = nullptr;
  }

  MOCK_METHOD(void, on_message, (PortIndex, Ref<Message>), (override));

  static ComponentInfo info() {
    ComponentInfo i;
    i.type = "test_mock_neighbour";
    i.summary = "GoogleMock stand-in for a neighbouring component";
    i.ports = {{"*", "any link"}};
    return i;
  }
  static Component* create(const ComponentContext& ctx) { return new StrictMock<MockNeighbour>(ctx); }

  /// Component's protected services, for the test's actions.
  void reply(Ref<Message> msg, NodeIndex to, Tick delay) {
    msg->route = &route_to(to);
    PortIndex out = msg->route->ports.front();
    send(out, std::move(msg), delay);
  }
  NodeIndex node(std::string_view id) const { return find_node(id); }

  /// The mock the last elaborated system created (one per system here).
  static inline MockNeighbour* instance = nullptr;
};

class MockNeighbourTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reg_ = test::builtin_registry();
    reg_->add_component_type({MockNeighbour::info(), &MockNeighbour::create});
    reg_->map_impl("test.mock", "(in-process)", "test_mock_neighbour", "test");
  }
  std::unique_ptr<core::Registry> reg_;
};

// host -> fwd (builtin.forwarding, 5 ns overhead) -> mock, 64 GB/s and 2 ns per link, 4096 B.
const char* kLine = R"(
nodes:
  - { id: host, impl: builtin.endpoint, params: { send_to: mock, send_bytes: 4096 } }
  - { id: fwd, impl: builtin.forwarding, params: { overhead_ns: 5 } }
  - { id: mock, impl: test.mock }
edges:
  - { src: host, dst: fwd, bandwidth_gbs: 64, latency_ns: 2, bidir: true }
  - { src: fwd, dst: mock, bandwidth_gbs: 64, latency_ns: 2, bidir: true }
)";

TEST_F(MockNeighbourTest, InProcessTypeIsListedNextToThePlugins) {
  EXPECT_EQ(reg_->component_for_impl("test.mock", "test").info.type, "test_mock_neighbour");
  EXPECT_EQ(reg_->components().at("test_mock_neighbour").from.library, "(in-process)");
  EXPECT_TRUE(reg_->components().count("forwarding"));
}

TEST_F(MockNeighbourTest, ReceivesTheWholeMessageOnceAtTheWormholeArrivalTime) {
  auto sys = test::build_system(*reg_, kLine);
  MockNeighbour* mock = MockNeighbour::instance;
  ASSERT_NE(mock, nullptr);
  // 16 flits of 4 ns. Head: at fwd at 6, +5 overhead = 11, on fwd->mock 11..15,
  // arrives 17. Body flits stream behind it at 4 ns: the tail arrives at
  // 17 + 15 x 4 = 77 ns, and only then is the message delivered.
  EXPECT_CALL(*mock, on_message(Eq(PortIndex{0}), _)).WillOnce([&](PortIndex, Ref<Message> msg) {
    EXPECT_EQ(sys->now(), ns(77));
    EXPECT_EQ(msg->bytes, 4096u);
    ASSERT_NE(msg->route, nullptr);
    EXPECT_EQ(msg->route->nodes.size(), 3u) << "host, fwd, mock";
    EXPECT_EQ(msg->route->nodes.back(), mock->index());
  });
  sys->run();
  sys->finish();
  EXPECT_EQ(sys->now(), ns(77)) << "nothing happens after the delivery";
  EXPECT_EQ(sys->stat("fwd", "transactions").count, 1u);
  EXPECT_EQ(sys->stat("fwd", "flits").count, 16u);
}

TEST_F(MockNeighbourTest, EachPacketArrivesInOrderAtItsOwnTime) {
  // Three packets 100 ns apart; the path is idle again long before each: 77, 177, 277 ns.
  auto sys = test::build_system(*reg_, kLine, {"nodes.host.params.count=3", "nodes.host.params.interval_ns=100"});
  MockNeighbour* mock = MockNeighbour::instance;
  ASSERT_NE(mock, nullptr);
  std::vector<Tick> arrivals;
  auto record = [&](PortIndex, Ref<Message>) { arrivals.push_back(sys->now()); };
  EXPECT_CALL(*mock, on_message(_, _)).Times(3).WillRepeatedly(record);
  sys->run();
  EXPECT_EQ(arrivals, (std::vector<Tick>{ns(77), ns(177), ns(277)}));
}

TEST_F(MockNeighbourTest, APartialPacketKeepsItsSize) {
  // 300 B: a 256 B head (4000 ps) and a 44 B tail (687.5 -> 688 ps). Head at fwd
  // at 6000, leaves 11000, on fwd->mock 11000..15000. Tail at fwd at
  // 4688 + 2000 = 6688, waits for the link: 15000..15688, arrives 17688 ps.
  auto sys = test::build_system(*reg_, kLine, {"nodes.host.params.send_bytes=300"});
  MockNeighbour* mock = MockNeighbour::instance;
  ASSERT_NE(mock, nullptr);
  EXPECT_CALL(*mock, on_message(_, _)).WillOnce([&](PortIndex, Ref<Message> msg) {
    EXPECT_EQ(sys->now(), 17688u);
    EXPECT_EQ(msg->bytes, 300u);
  });
  sys->run();
}

TEST_F(MockNeighbourTest, AnswersBackThroughTheRealForwarderAndTheSenderSeesTheRoundTrip) {
  // The mock sends the packet back 10 ns after it arrived (at 77 ns), so it
  // leaves at 87. Back path: mock->fwd 16 flits of 4 ns, head at fwd at
  // 87 + 4 + 2 = 93, +5 overhead = 98, fwd->host 98..102, arrives 104; tail
  // 104 + 15 x 4 = 164 ns. The endpoint measures from its own send time (0).
  auto sys = test::build_system(*reg_, kLine);
  MockNeighbour* mock = MockNeighbour::instance;
  ASSERT_NE(mock, nullptr);
  EXPECT_CALL(*mock, on_message(_, _)).WillOnce([&](PortIndex, Ref<Message> msg) {
    EXPECT_EQ(sys->now(), ns(77));
    mock->reply(std::move(msg), mock->node("host"), ns(10));
  });
  sys->run();
  sys->finish();
  EXPECT_EQ(sys->stat("host", "received").count, 1u);
  EXPECT_EQ(ns_to_ticks(sys->stat("host", "latency_min_ns").value), ns(164));
  EXPECT_EQ(sys->stat("fwd", "transactions").count, 2u);
}

TEST_F(MockNeighbourTest, AControlMessageArrivesAfterLatenciesAndOverheadOnly) {
  // 0 bytes: 2 ns + 5 ns overhead + 2 ns.
  auto sys = test::build_system(*reg_, kLine, {"nodes.host.params.send_bytes=0"});
  MockNeighbour* mock = MockNeighbour::instance;
  ASSERT_NE(mock, nullptr);
  EXPECT_CALL(*mock, on_message(_, _)).WillOnce([&](PortIndex, Ref<Message> msg) {
    EXPECT_EQ(sys->now(), ns(9));
    EXPECT_EQ(msg->bytes, 0u);
  });
  sys->run();
}

TEST_F(MockNeighbourTest, NothingArrivesWhenTheSenderSendsNothing) {
  // StrictMock: any call would fail the test.
  auto sys = test::build_system(*reg_, kLine, {"nodes.host.params.count=0"});
  ASSERT_NE(MockNeighbour::instance, nullptr);
  sys->run();
  EXPECT_EQ(sys->events(), 0u);
}

}  // namespace
}  // namespace kbsim
