// builtin.pe_scheduler's queues (docs/model.md, "The PE"): the submission
// queue, in-flight table and completion queue as statistics, and the times and
// order in which commands come back. First in isolation (the SDK harness, with
// stand-in engines that hand every tile back 10 ns after it arrives), then on
// the default system with the real engines.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kbsim/pe/command.hpp"
#include "kbsim/testing.hpp"

namespace kbsim {
namespace {

using pe::Command;
using pe::CommandKind;
using pe::StageType;
using Returned = std::vector<std::pair<Tick, std::uint64_t>>;  ///< (time, command id), in arrival order

constexpr Tick ns(Tick n) { return n * kPsPerNs; }

Ref<Command> simple(std::uint64_t id, pe::Stage stage) {
  Ref<Command> c = make_message<Command>();
  c->id = id;
  c->stage = stage;
  c->kind = stage.type == StageType::kGemm ? CommandKind::kGemm : CommandKind::kMath;
  return c;
}
Ref<Command> gemm(std::uint64_t id) { return simple(id, {StageType::kGemm, 0, 0, 32, 64, 32}); }
Ref<Command> math(std::uint64_t id) { return simple(id, {StageType::kMath, 0, 0, 32, 0, 32}); }

// --- in isolation -------------------------------------------------------------------------------------------------

/// Stands in for PE_CPU: keeps the commands handed back.
struct Cpu final : testkit::Neighbour {
  void received(Tick at, Message& msg) override { back.emplace_back(at, msg.as<Command>().id); }
  Returned back;
};

/// Stands in for an engine: runs a tile's remaining stages in 10 ns and hands it back.
struct Engine final : testkit::Neighbour {
  Engine(testkit::Harness& h, std::string id) : h_(h), id_(std::move(id)) {}
  void received(Tick at, Message& msg) override {
    auto& t = msg.as<pe::TileToken>();
    t.stage = static_cast<std::uint32_t>(t.plan().stages.size());
    h_.inject(at + ns(10), id_, Ref<Message>(&msg));
  }

 private:
  testkit::Harness& h_;
  std::string id_;
};

class PeSchedulerQueues : public ::testing::Test {
 protected:
  void SetUp() override {
    h.component("builtin.pe_scheduler", {{"max_inflight_tiles", std::int64_t{2}}});
    h.neighbour("pe_cpu", "pe_internal", cpu);
    for (const char* e : {"pe_dma", "pe_fetch_store", "pe_gemm", "pe_math"}) {
      engines.push_back(std::make_unique<Engine>(h, e));
      h.neighbour(e, "pe_internal", *engines.back());
    }
    h.build();
  }
  void submit(Ref<Command> cmd) {
    cmd->reply_to = h.system().find_node("pe_cpu");
    h.inject(0, "pe_cpu", std::move(cmd));
  }
  /// Statistics are folded at finish: run to the last event, then finish.
  void run() {
    h.system().run();
    h.system().finish();
  }
  double stat(const char* name) {
    const Stat& s = h.stat(name);
    return s.count ? static_cast<double>(s.count) : s.value;
  }

  Cpu cpu;
  std::vector<std::unique_ptr<Engine>> engines;
  testkit::Harness h;
};

TEST_F(PeSchedulerQueues, QueueDepthsAndReturnTimes) {
  // Node order: dut 0, pe_cpu 1, pe_dma 2, pe_fetch_store 3, pe_gemm 4, pe_math 5.
  // At 0: GEMM 1 (one tile) is fed; composite MATH 2 (3 tiles of 32x32) feeds 2 tiles, its tile buffers full;
  // 3 and 4 wait in the submission queue. At 10: 1's tile comes back and 1 returns; 2's first tile comes back, so
  // 2's third tile is fed, then 3's and 4's; then 2's second tile comes back. At 20: the rest come back.
  submit(gemm(1));
  Ref<Command> composite = make_message<Command>();
  composite->id = 2;
  composite->kind = CommandKind::kCompositeMath;
  composite->math.m = 96;
  composite->math.n = 32;
  submit(composite);
  submit(math(3));
  submit(gemm(4));
  run();

  // 2, 3 and 4 all complete at 20 ns, in the order their last tiles come back, which is deterministic
  // (docs/architecture.md, "The order of simultaneous events"): the tiles of 2, 3 and 4 were all fed at 10 ns by
  // one handler (2's first tile back), so their stand-in engines' hand-backs at 20 ns share a root and a delay
  // and go by the scheduling node: pe_dma (2's tile, node 2), pe_gemm (4's, node 4), pe_math (3's, node 5). The
  // scheduler returns each command as soon as its last tile is back, so 4 returns before 3.
  EXPECT_EQ(cpu.back, (Returned{{ns(10), 1}, {ns(20), 2}, {ns(20), 4}, {ns(20), 3}}));

  EXPECT_EQ(stat("commands"), 4.0);
  EXPECT_EQ(stat("composite_commands"), 1.0);
  EXPECT_EQ(stat("tiles"), 6.0);
  EXPECT_EQ(stat("completed_commands"), 4.0);
  EXPECT_EQ(stat("submission_queue_peak"), 2.0);         // 3 and 4, 0..10 ns
  EXPECT_DOUBLE_EQ(stat("submission_queue_mean"), 1.0);  // 2 x 10 ns over 20 ns
  EXPECT_EQ(stat("inflight_commands_peak"), 3.0);        // 2, 3 and 4 at 10 ns (1 left just before)
  EXPECT_EQ(stat("inflight_tiles_peak"), 4.0);           // at 10 ns: 2's second and third, 3's and 4's
  EXPECT_DOUBLE_EQ(stat("inflight_tiles_mean"), 3.0);    // 3 tiles out through 0..10 and 10..20
  EXPECT_EQ(stat("completion_queue_peak"), 1.0);         // returned as soon as complete
}

// --- on the default system, with the real engines -----------------------------------------------------------------

/// Stands in for pe_cpu: sends commands to its PE's scheduler.
class Driver final : public Component {
 public:
  explicit Driver(const ComponentContext& ctx) : Component(ctx) {}
  static ComponentInfo info() {
    ComponentInfo i;
    i.type = "pe_driver";
    i.summary = "test stand-in for pe_cpu";
    i.ports = {{"*", "any"}};
    return i;
  }
  void submit(Ref<Command> cmd) {
    cmd->reply_to = index();
    schedule(0, 0, std::move(cmd));
  }
  void on_timer(std::uint64_t, Ref<Message> msg) override {
    send(out_port_to(find_node(pe::sibling(id(), "pe_scheduler"))), std::move(msg));
  }
  void on_message(PortIndex, Ref<Message> msg) override { back.emplace_back(now(), msg->as<Command>().id); }
  Returned back;
};

const testkit::Plugins& plugins() {
  static const std::unique_ptr<testkit::Plugins> loaded = [] {
    auto p = std::make_unique<testkit::Plugins>();
    PluginDescriptor here{};
    add_component<Driver>(here);
    p->add(std::move(here), "test");  // test.pe_driver
    return p;
  }();
  return *loaded;
}

TEST(PeSchedulerOnTheDefaultSystem, CommandsComeBackWhenTheRealEnginesAreDone) {
  std::unique_ptr<System> sys = plugins().build(plugins().load_topology(
      KBSIM_SOURCE_DIR "/topology.yaml", {"cube.pe_template.components.pe_cpu={impl: test.pe_driver}"}));
  auto& driver = dynamic_cast<Driver&>(sys->component("sip0.cube0.pe0.pe_cpu"));
  // A GEMM (16 ns on the MAC array), then a MATH that waits for the shared compute slot (16..32 ns); PE-internal
  // links carry commands and tokens in 0 ns.
  driver.submit(gemm(1));
  driver.submit(math(2));
  sys->run();
  EXPECT_EQ(driver.back, (Returned{{ns(16), 1}, {ns(32), 2}}));
  // Each command is one tile, fed as soon as it arrives: both are in flight from 0 until 16 ns.
  const char* const scheduler = "sip0.cube0.pe0.pe_scheduler";
  EXPECT_EQ(sys->stat(scheduler, "submission_queue_peak").count, 1u);
  EXPECT_EQ(sys->stat(scheduler, "inflight_commands_peak").count, 2u);
  EXPECT_EQ(sys->stat(scheduler, "inflight_tiles_peak").count, 2u);
  EXPECT_EQ(sys->stat(scheduler, "completion_queue_peak").count, 1u);
  EXPECT_EQ(sys->stat(scheduler, "completed_commands").count, 2u);
}

}  // namespace
}  // namespace kbsim
