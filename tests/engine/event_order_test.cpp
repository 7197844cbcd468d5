// The order of simultaneous events as the simulation keys them (docs/architecture.md, "The order of simultaneous
// events"): of two messages arriving at one instant, the one scheduled earlier comes first, then the one from the
// lower-numbered node, whatever order their senders ran in. In-process components: a relay that passes every
// message it gets (or, with `kick`, a timer at time 0) on to all its out-ports, and a recorder.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness.hpp"

namespace kbsim {
namespace {

struct Note final : Message {
  static constexpr std::string_view kName = "test.order.Note";
  static constexpr TypeId kType = type_id(kName);
  Note() : Message(kType) {}
};

class Relay : public Component {
 public:
  using Component::Component;
  static ComponentInfo info() {
    ComponentInfo i;
    i.type = "test_order_relay";
    i.summary = "passes each message on to all its out-ports";
    i.ports = {{"*", "any link"}};
    i.params = {param_int("kick", 0, "1: at time 0, a timer that sends on all out-ports")};
    return i;
  }
  void setup() override {
    if (params().get_int("kick")) schedule(0);
  }
  void on_timer(std::uint64_t, Ref<Message>) override { pass(); }
  void on_message(PortIndex, Ref<Message>) override { pass(); }

 private:
  void pass() {
    for (PortIndex p = 0; p < out_ports().size(); ++p) send(p, make_message<Note>());
  }
};

class Recorder : public Component {
 public:
  using Component::Component;
  static ComponentInfo info() {
    ComponentInfo i;
    i.type = "test_order_recorder";
    i.summary = "records who sent what it receives, and when";
    i.ports = {{"*", "any link"}};
    return i;
  }
  void on_message(PortIndex, Ref<Message> msg) override { heard.push_back({now(), std::string(msg->sender())}); }
  struct Heard {
    Tick at;
    std::string from;
    bool operator==(const Heard&) const = default;
  };
  static inline std::vector<Heard> heard;
};

class EventOrder : public ::testing::Test {
 protected:
  void SetUp() override {
    reg_ = test::builtin_registry();
    reg_->add_component_type({Relay::info(), [](const ComponentContext& c) -> Component* { return new Relay(c); }});
    reg_->add_component_type(
        {Recorder::info(), [](const ComponentContext& c) -> Component* { return new Recorder(c); }});
    reg_->map_impl("test.relay", "(in-process)", "test_order_relay", "test");
    reg_->map_impl("test.recorder", "(in-process)", "test_order_recorder", "test");
    Recorder::heard.clear();
  }
  std::vector<Recorder::Heard> run(const std::string& yaml) {
    auto sys = test::build_system(*reg_, yaml);
    sys->run();
    sys->finish();
    return Recorder::heard;
  }
  std::unique_ptr<core::Registry> reg_;
};

constexpr Tick ns(Tick n) { return n * kPsPerNs; }

TEST_F(EventOrder, AtOneInstantTheLowerNodeComesFirstWhateverOrderTheSendersRan) {
  // k's timer sends to a, then to b (both arrive at 1 ns); a runs first, but b is node 0 and a node 1: at 6 ns the
  // recorder hears b, then a. (Scheduling order would say a, then b.)
  const auto heard = run(R"(
nodes:
  - { id: b, impl: test.relay }
  - { id: a, impl: test.relay }
  - { id: k, impl: test.relay, params: { kick: 1 } }
  - { id: r, impl: test.recorder }
edges:
  - { src: k, dst: a, latency_ns: 1 }
  - { src: k, dst: b, latency_ns: 1 }
  - { src: a, dst: r, latency_ns: 5 }
  - { src: b, dst: r, latency_ns: 5 }
)");
  EXPECT_EQ(heard, (std::vector<Recorder::Heard>{{ns(6), "b"}, {ns(6), "a"}}));
}

TEST_F(EventOrder, TheEarlierScheduledComesFirstEvenFromAHigherNode) {
  // k sends at 0 to r (10 ns away) and to a (1 ns away); a sends on at 1 ns to r (9 ns away): both arrive at 10 ns.
  // a is the lower node, but k's message was scheduled first.
  const auto heard = run(R"(
nodes:
  - { id: a, impl: test.relay }
  - { id: k, impl: test.relay, params: { kick: 1 } }
  - { id: r, impl: test.recorder }
edges:
  - { src: k, dst: r, latency_ns: 10 }
  - { src: k, dst: a, latency_ns: 1 }
  - { src: a, dst: r, latency_ns: 9 }
)");
  EXPECT_EQ(heard, (std::vector<Recorder::Heard>{{ns(10), "k"}, {ns(10), "a"}}));
}

}  // namespace
}  // namespace kbsim
