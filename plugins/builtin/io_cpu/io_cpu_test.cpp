// IO_CPU as the entry of host commands (docs/model.md, "Host commands and the
// launch barrier"), on the default system: it refuses a command stated for
// another SIP's device (target_device), and it ends a launch whose PEs fail by
// the launch's failure_policy (PE_CPU replaced by tests/support/scripted_pe_cpu.hpp's).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kbsim/ahbm/host_command.hpp"
#include "kbsim/testing.hpp"
#include "scripted_pe_cpu.hpp"

namespace kbsim {
namespace {

using ahbm::FailurePolicy;
using ahbm::HostCommand;

struct Client final : HostCommand::Client {
  std::vector<Ref<HostCommand>> done;
  void on_complete(HostCommand& c) override { done.emplace_back(&c); }
};

class IoCpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto& plugins = test_scripted::plugins_with_scripted_pe_cpu();
    sim_ = plugins.build(plugins.load_topology(KBSIM_SOURCE_DIR "/topology.yaml", {test_scripted::kSwapPeCpu}));
  }
  /// A launch of `kernel` on cubes 0..cubes-1 x PEs 0..pes-1 of SIP 0, submitted to sip0's IO_CPU.
  Ref<HostCommand> launch(const std::string& kernel, unsigned cubes, unsigned pes, FailurePolicy policy,
                          unsigned device = ahbm::kAnyDevice) {
    auto cmd = make_message<HostCommand>();
    cmd->kind = HostCommand::Kind::kLaunch;
    cmd->kernel = kernel;
    cmd->failure_policy = policy;
    cmd->target_device = device;
    for (unsigned c = 0; c < cubes; ++c)
      for (unsigned p = 0; p < pes; ++p) cmd->targets.push_back({0, c, p});
    ahbm::as_command_target(sim_->component("sip0.io0.io_cpu"))->submit(cmd, &client_);
    return cmd;
  }

  std::unique_ptr<System> sim_;
  Client client_;
};

TEST_F(IoCpu, RefusesACommandForAnotherDeviceWithoutFanningItOut) {
  auto wrong = launch("ok", 1, 2, FailurePolicy::kFailFast, 1);
  auto map = make_message<HostCommand>();
  map->kind = HostCommand::Kind::kMmuMap;
  map->target_device = 3;
  map->targets = {{0, 0, 0}};
  map->entries = std::make_shared<const std::vector<ahbm::MmuEntry>>(
      std::vector<ahbm::MmuEntry>{{{0, 0, 0}, 0x40000, 0x9000000, 0x1000}});
  ahbm::as_command_target(sim_->component("sip0.io0.io_cpu"))->submit(map, &client_);
  sim_->run();
  ASSERT_EQ(client_.done.size(), 2u);
  EXPECT_FALSE(wrong->completion.ok);
  EXPECT_EQ(wrong->completion.error_code, "WRONG_DEVICE");
  EXPECT_EQ(wrong->completion.error_message, "a kernel launch for sip:1 reached sip0.io0.io_cpu, which is on sip:0");
  EXPECT_EQ(map->completion.error_code, "WRONG_DEVICE");
  EXPECT_EQ(map->completion.error_message, "an MMU map for sip:3 reached sip0.io0.io_cpu, which is on sip:0");
  EXPECT_DOUBLE_EQ(ticks_to_ns(wrong->t_done), 10.0);  // refused after IO_CPU's overhead
  EXPECT_EQ(sim_->stat("sip0.cube0.m_cpu", "commands").count, 0u);
  EXPECT_EQ(sim_->stat("sip0.io0.io_cpu", "responses").count, 0u);
  EXPECT_FALSE(ahbm::as_translator(sim_->component("sip0.cube0.pe0.pe_mmu"))->translate(0x40000).mapped);
}

TEST_F(IoCpu, ACommandForItsOwnDeviceOrNoneStatedIsCarriedOut) {
  auto own = launch("ok", 2, 2, FailurePolicy::kFailFast, 0);
  sim_->run();
  auto unstated = launch("ok", 2, 2, FailurePolicy::kFailFast);
  sim_->run();
  for (const auto& cmd : {own, unstated}) {
    EXPECT_TRUE(cmd->completion.ok) << cmd->completion.error_message;
    EXPECT_EQ(cmd->results.size(), 4u);
    EXPECT_TRUE(cmd->failures.empty());
  }
  EXPECT_EQ(own->t_done - own->t_issue, unstated->t_done - unstated->t_issue);  // the check costs no time
}

TEST_F(IoCpu, FailFastCompletesWithTheFirstFailureToArriveAndDropsTheRest) {
  // PEs answer in reverse order (pe3 first), cube 0 before cube 1: sip0.cube0.pe3's OUT_OF_MEMORY arrives first.
  auto cmd = launch("fail-odd", 2, 4, FailurePolicy::kFailFast);
  sim_->run();
  ASSERT_EQ(client_.done.size(), 1u);
  EXPECT_FALSE(cmd->completion.ok);
  EXPECT_EQ(cmd->completion.error_code, "OUT_OF_MEMORY");
  EXPECT_EQ(cmd->completion.error_message, "sip0.cube0.pe3: kernel 'fail-odd' failed");
  ASSERT_EQ(cmd->failures.size(), 1u);
  EXPECT_TRUE(cmd->results.empty());  // nothing had answered before it; the later answers were dropped
  // Every PE answered its M_CPU, and each M_CPU passed its first failure on at once; IO_CPU took only cube 0's.
  EXPECT_EQ(sim_->stat("sip0.cube0.m_cpu", "answers").count, 4u);
  EXPECT_EQ(sim_->stat("sip0.cube1.m_cpu", "answers").count, 4u);
  EXPECT_EQ(sim_->stat("sip0.io0.io_cpu", "responses").count, 2u);

  // The same launch collecting every failure completes only when the last PE (cube 1's pe0, 2600 ns) answered,
  // 1300 ns after cube 0's pe3 failed.
  SetUp();
  client_.done.clear();
  auto all = launch("fail-odd", 2, 4, FailurePolicy::kCollectAll);
  sim_->run();
  EXPECT_GT(all->t_done, cmd->t_done + ns_to_ticks(1000));
}

TEST_F(IoCpu, CollectAllWaitsForEveryPeAndNamesEveryFailureInPeOrder) {
  auto cmd = launch("fail-odd", 2, 4, FailurePolicy::kCollectAll);
  sim_->run();
  ASSERT_EQ(client_.done.size(), 1u);
  EXPECT_FALSE(cmd->completion.ok);
  EXPECT_EQ(cmd->completion.error_code, "KERNEL_FAILED");  // the first failed PE's, sip0.cube0.pe1
  EXPECT_EQ(cmd->completion.error_message,
            "4 of 8 PEs failed: sip0.cube0.pe1 KERNEL_FAILED, sip0.cube0.pe3 OUT_OF_MEMORY, sip0.cube1.pe1 "
            "KERNEL_FAILED, sip0.cube1.pe3 OUT_OF_MEMORY; sip0.cube0.pe1: kernel 'fail-odd' failed");
  EXPECT_EQ(cmd->results.size(), 4u);  // the PEs that succeeded
  // It ends when a launch that fails nowhere ends: after the last answer.
  SetUp();
  auto ok = launch("ok", 2, 4, FailurePolicy::kCollectAll);
  sim_->run();
  EXPECT_TRUE(ok->completion.ok);
  EXPECT_EQ(cmd->t_done - cmd->t_issue, ok->t_done - ok->t_issue);
}

}  // namespace
}  // namespace kbsim
