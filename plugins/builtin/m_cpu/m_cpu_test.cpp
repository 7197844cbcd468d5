// M_CPU merging its PEs' answers to a launch by the launch's failure_policy
// (docs/model.md, "Host commands and the launch barrier"), on the default
// system with PE_CPU replaced by a scripted one (tests/support/scripted_pe_cpu.hpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kbsim/ahbm/host_command.hpp"
#include "kbsim/testing.hpp"
#include "scripted_pe_cpu.hpp"

namespace kbsim {
namespace {

using ahbm::FailurePolicy;
using ahbm::HostCommand;
using ahbm::PeRef;

struct Client final : HostCommand::Client {
  std::vector<Ref<HostCommand>> done;
  void on_complete(HostCommand& c) override { done.emplace_back(&c); }
};

class MCpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto& plugins = test_scripted::plugins_with_scripted_pe_cpu();
    sim_ = plugins.build(plugins.load_topology(KBSIM_SOURCE_DIR "/topology.yaml", {test_scripted::kSwapPeCpu}));
  }
  /// A launch of `kernel` on PEs `pes` of sip0.cube0, handed to that cube's M_CPU directly.
  Ref<HostCommand> launch(const std::string& kernel, const std::vector<unsigned>& pes, FailurePolicy policy) {
    auto cmd = make_message<HostCommand>();
    cmd->kind = HostCommand::Kind::kLaunch;
    cmd->kernel = kernel;
    cmd->failure_policy = policy;
    for (unsigned p : pes) cmd->targets.push_back({0, 0, p});
    ahbm::as_command_target(sim_->component("sip0.cube0.m_cpu"))->submit(cmd, &client_);
    return cmd;
  }
  double latency(const std::string& from, const std::string& to) {
    return sim_->route_info(from, to, "memory").latency_ns();
  }

  std::unique_ptr<System> sim_;
  Client client_;
};

TEST_F(MCpu, FailFastAnswersWithTheFirstFailedPeAtOnce) {
  auto cmd = launch("fail-odd", {0, 1, 2, 3}, FailurePolicy::kFailFast);
  sim_->run();  // to the end: the answers still out arrive and are dropped
  ASSERT_EQ(client_.done.size(), 1u);
  EXPECT_EQ(cmd->completion.error_code, "OUT_OF_MEMORY");
  EXPECT_EQ(cmd->completion.error_message, "sip0.cube0.pe3: kernel 'fail-odd' failed");
  ASSERT_EQ(cmd->failures.size(), 1u);
  EXPECT_EQ(cmd->failures[0].pe, (PeRef{0, 0, 3}));
  EXPECT_TRUE(cmd->results.empty());
  EXPECT_EQ(sim_->stat("sip0.cube0.m_cpu", "answers").count, 4u);
  // Its overhead, the leg to pe3 (the first to answer: 1300 ns), the way back and its overhead again.
  const double want = 5 + latency("sip0.cube0.m_cpu", "sip0.cube0.pe3.pe_cpu") + 1300 +
                      latency("sip0.cube0.pe3.pe_cpu", "sip0.cube0.m_cpu") + 5;
  EXPECT_DOUBLE_EQ(ticks_to_ns(cmd->t_done), want);
}

TEST_F(MCpu, CollectAllAnswersWhenEveryPeHasAndListsTheFailuresInPeOrder) {
  auto cmd = launch("fail-odd", {3, 2, 1, 0}, FailurePolicy::kCollectAll);
  sim_->run();
  ASSERT_EQ(client_.done.size(), 1u);
  EXPECT_EQ(cmd->completion.error_code, "KERNEL_FAILED");
  EXPECT_EQ(cmd->completion.error_message,
            "2 of 4 PEs failed: sip0.cube0.pe1 KERNEL_FAILED, sip0.cube0.pe3 OUT_OF_MEMORY; sip0.cube0.pe1: kernel "
            "'fail-odd' failed");
  EXPECT_EQ(cmd->results.size(), 2u);
  // pe0 answers last (1600 ns).
  const double want = 5 + latency("sip0.cube0.m_cpu", "sip0.cube0.pe0.pe_cpu") + 1600 +
                      latency("sip0.cube0.pe0.pe_cpu", "sip0.cube0.m_cpu") + 5;
  EXPECT_DOUBLE_EQ(ticks_to_ns(cmd->t_done), want);
}

TEST_F(MCpu, ALaunchWithoutFailuresIsTheSameUnderBothPolicies) {
  auto fast = launch("ok", {0, 1, 2, 3}, FailurePolicy::kFailFast);
  sim_->run();
  SetUp();
  auto all = launch("ok", {0, 1, 2, 3}, FailurePolicy::kCollectAll);
  sim_->run();
  for (const auto& cmd : {fast, all}) {
    EXPECT_TRUE(cmd->completion.ok);
    EXPECT_EQ(cmd->results.size(), 4u);
  }
  EXPECT_EQ(fast->t_done, all->t_done);
}

TEST(HostCommandMerge, AFailedLegWithoutPeFailuresCountsForEachOfItsPes) {
  HostCommand cmd;
  cmd.failure_policy = FailurePolicy::kCollectAll;
  cmd.targets = {{0, 1, 0}, {0, 1, 1}, {0, 0, 2}};
  HostCommand leg;
  leg.targets = {{0, 1, 1}, {0, 1, 0}};
  leg.completion = {false, "NO_TARGET", "no such node"};
  HostCommand pe;
  pe.targets = {{0, 0, 2}};
  pe.completion = {false, "KERNEL_FAILED", "boom"};
  cmd.merge(leg);
  cmd.merge(pe);
  cmd.summarize_failures();
  EXPECT_EQ(cmd.completion.error_code, "KERNEL_FAILED");  // sip0.cube0.pe2 comes first in PE order
  EXPECT_EQ(cmd.completion.error_message,
            "3 of 3 PEs failed: sip0.cube0.pe2 KERNEL_FAILED, sip0.cube1.pe0 NO_TARGET, sip0.cube1.pe1 NO_TARGET; "
            "sip0.cube0.pe2: boom");
}

}  // namespace
}  // namespace kbsim
