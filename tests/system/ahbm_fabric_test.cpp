// The AHBM fabric plugins on the default system: host memory requests and
// their errors, the via-M_CPU path, PE DMA, and HBM pseudo-channel timing
// (address striping, the burst size, the power-of-two settings).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"
#include "kbsim/ahbm/memory.hpp"
#include "kbsim/ahbm/memory_map.hpp"

namespace kbsim {
namespace {

using ahbm::MemOp;
using ahbm::MemRequest;
using ::testing::HasSubstr;

struct Collector final : ahbm::MemClient {
  std::vector<Ref<MemRequest>> done;
  void on_complete(MemRequest& r) override { done.emplace_back(&r); }
};

class Fabric : public ::testing::Test {
 protected:
  void SetUp() override { build({}); }
  /// (Re)build the default system with `--set`-style overrides.
  void build(const std::vector<std::string>& overrides) {
    graph_ = kbsim::test::load_topology(KBSIM_SOURCE_DIR "/topology.yaml", overrides);
    sim_ = core::simulated(graph_, test::shared_registry());
    map_ = ahbm::MemoryMap::from(sim_->attrs());
  }
  Ref<MemRequest> submit(const std::string& initiator, MemOp op, std::uint64_t pa, std::uint64_t bytes,
                         bool via_mcpu = false) {
    auto r = make_message<MemRequest>();
    r->op = op;
    r->pa = pa;
    r->nbytes = bytes;
    r->via_mcpu = via_mcpu;
    auto* init = ahbm::as_initiator(sim_->component(initiator));
    EXPECT_NE(init, nullptr) << initiator;
    init->submit(r, &client_);
    return r;
  }
  std::uint64_t slice(unsigned cube, unsigned pe, std::uint64_t offset = 0) {
    return ahbm::pe_hbm_addr(0, cube, pe, offset, map_.slice_bytes);
  }
  static double ns(Tick t) { return ticks_to_ns(t); }

  Graph graph_;
  std::unique_ptr<core::SimulatedSystem> sim_;
  ahbm::MemoryMap map_;
  Collector client_;
};

TEST_F(Fabric, BadHostRequestsCompleteWithAnErrorCodeAndNothingCrashes) {
  const std::string ep = "sip0.io0.pcie_ep";
  auto mbz = submit(ep, MemOp::kWrite, slice(0, 0) | (std::uint64_t{1} << 40), 64);
  auto nosip = submit(ep, MemOp::kWrite, ahbm::hbm_addr(5, 0, 0), 64);
  auto zero = submit(ep, MemOp::kRead, slice(0, 0), 0);
  auto huge = submit(ep, MemOp::kWrite, slice(0, 7), std::uint64_t{1} << 40);
  auto wide = submit(ep, MemOp::kRead, std::uint64_t{1} << 55, 64);
  sim_->run();
  ASSERT_EQ(client_.done.size(), 5u);
  const std::pair<Ref<MemRequest>*, const char*> expect[] = {
      {&mbz, "MBZ_SET"}, {&nosip, "NO_SUCH_SIP"}, {&zero, "ZERO_LENGTH"}, {&huge, "OVERSIZE"}, {&wide, "ADDR_WIDTH"}};
  for (const auto& [r, code] : expect) {
    EXPECT_FALSE((*r)->completion.ok);
    EXPECT_EQ((*r)->completion.error_code, code);
    EXPECT_FALSE((*r)->completion.error_message.empty());
    EXPECT_EQ(ns((*r)->t_done), 5.0) << code;  // refused after the pcie_ep overhead; nothing entered the fabric
  }
  EXPECT_EQ(sim_->stat(ep, "host_errors").count, 5u);
  EXPECT_EQ(sim_->stat("sip0.cube0.hbm_ctrl.pe0", "writes").count, 0u);
}

TEST_F(Fabric, HostReadReturnsItsDataOverTheReversePath) {
  auto r = submit("sip0.io0.pcie_ep", MemOp::kRead, slice(4, 2), 4096);
  sim_->run();
  ASSERT_TRUE(r->completion.ok);
  EXPECT_GT(r->t_done, r->t_serviced);
  EXPECT_EQ(sim_->stat("sip0.cube4.hbm_ctrl.pe2", "reads").count, 1u);
  EXPECT_EQ(sim_->stat("sip0.cube4.hbm_ctrl.pe2", "bursts").count, 16u);  // 4096 / 256
}

TEST_F(Fabric, ViaMcpuGoesThroughIoCpuAndTheCubeDmaAndIsSlower) {
  auto direct = submit("sip0.io0.pcie_ep", MemOp::kWrite, slice(5, 3), 4096);
  sim_->run();
  SetUp();
  auto relayed = submit("sip0.io0.pcie_ep", MemOp::kWrite, slice(5, 3), 4096, true);
  sim_->run();
  ASSERT_TRUE(direct->completion.ok);
  ASSERT_TRUE(relayed->completion.ok);
  EXPECT_EQ(sim_->stat("sip0.io0.io_cpu", "commands").count, 1u);
  EXPECT_EQ(sim_->stat("sip0.cube5.m_cpu", "dma_writes").count, 1u);
  EXPECT_EQ(sim_->stat("sip0.cube5.m_cpu", "responses").count, 1u);
  // io_cpu (10 ns) and M_CPU (5 ns) overheads plus their store-and-forward of 4 KB.
  EXPECT_GT(ns(relayed->t_done), ns(direct->t_done) + 15.0);
}

// PC = (offset >> 8) & 7. PE0 writes 256 B to its slice at offset 0 (PC0):
// pe_dma->r0c0 1 ns (256 B at 256 GB/s), router 2 ns, r0c0->hbm 1 ns
// (256 GB/s): arrives 4, commits 4..12. PE1's 256 B goes
// pe_dma->r0c1 1, +2, r0c1->r0c0 1 + 0.15 wire, +2, ->hbm 1: arrives 7.15.
// On another PC it commits 7.15..15.15; on PC0 it waits: 12..20.
TEST_F(Fabric, HbmPseudoChannelsStripeByAddress) {
  auto a = submit("sip0.cube0.pe0.pe_dma", MemOp::kWrite, slice(0, 0, 0), 256);
  auto b = submit("sip0.cube0.pe1.pe_dma", MemOp::kWrite, slice(0, 0, 256), 256);  // PC1
  sim_->run();
  EXPECT_DOUBLE_EQ(ns(a->t_serviced), 12.0);
  EXPECT_DOUBLE_EQ(ns(b->t_serviced), 15.15);
  SetUp();
  a = submit("sip0.cube0.pe0.pe_dma", MemOp::kWrite, slice(0, 0, 0), 256);
  b = submit("sip0.cube0.pe1.pe_dma", MemOp::kWrite, slice(0, 0, 2048), 256);  // PC0 again
  sim_->run();
  EXPECT_DOUBLE_EQ(ns(a->t_serviced), 12.0);
  EXPECT_DOUBLE_EQ(ns(b->t_serviced), 20.0);
}

constexpr const char* kPe0Dma = "sip0.cube0.pe0.pe_dma";
constexpr const char* kPe0Hbm = "sip0.cube0.hbm_ctrl.pe0";

// A 2 KB write from PE0 to its own slice is eight 256 B flits reaching the
// controller 1 ns apart, at 4, 5, ..., 11 ns (as above: the router's 2 ns delays
// the first, the 256 GB/s links space the rest). Consecutive bursts take
// consecutive PCs, so every flit commits at once on a PC of its own, the last
// at 11..19; had two shared a PC, the later would have waited and ended at 20
// or after. A 4 KB write goes round the eight PCs twice: flit i >= 8 arrives at
// 4 + i just as PC i - 8 frees, and the last commits at 19..27. Starting at
// PC5 (offset 2048 + 5 x 256) the eight flits again find eight PCs: 19.
TEST_F(Fabric, HbmConsecutiveBurstsSpreadOverAllEightPseudoChannels) {
  auto two_k = submit(kPe0Dma, MemOp::kWrite, slice(0, 0, 0), 2048);
  sim_->run();
  EXPECT_DOUBLE_EQ(ns(two_k->t_serviced), 19.0);
  EXPECT_EQ(sim_->stat(kPe0Hbm, "bursts").count, 8u);
  EXPECT_DOUBLE_EQ(sim_->stat(kPe0Hbm, "pc_busy_ns").value, 8 * 8.0);  // 8 ns a burst
  SetUp();
  auto four_k = submit(kPe0Dma, MemOp::kWrite, slice(0, 0, 0), 4096);
  sim_->run();
  EXPECT_DOUBLE_EQ(ns(four_k->t_serviced), 27.0);
  SetUp();
  auto from_pc5 = submit(kPe0Dma, MemOp::kWrite, slice(0, 0, 2048 + 5 * 256), 2048);
  sim_->run();
  EXPECT_DOUBLE_EQ(ns(from_pc5->t_serviced), 19.0);
}

// PC = (offset >> log2(burst_bytes)) & (PCs - 1): the same 2 KB write (flits at
// 4 .. 11 ns, 8 ns each on a PC) with longer bursts puts 2, 4 or 8 consecutive
// flits on one PC, each waiting for the one before. 512 B: pairs on PCs 0-3, the
// last pair 10..18, 18..26. 1 KiB: four flits each on PCs 0 and 1, PC1 from 8 to
// 40. 2 KiB: all eight on PC0, 4..12 up to 60..68. The controller's own
// burst_bytes overrides the system's; with 4 PCs, flits i and i + 4 share PC i:
// flit 7 arrives at 11, waits for flit 3 (7..15) and ends at 23.
TEST_F(Fabric, HbmPseudoChannelFollowsTheBurstSize) {
  const std::pair<std::string, double> cases[] = {{"cube.memory_map.burst_bytes=256", 19.0},
                                                  {"cube.memory_map.burst_bytes=512", 26.0},
                                                  {"cube.memory_map.burst_bytes=1024", 40.0},
                                                  {"cube.memory_map.burst_bytes=2048", 68.0},
                                                  {"cube.components.hbm_ctrl.attrs.burst_bytes=2048", 68.0},
                                                  {"cube.components.hbm_ctrl.attrs.num_pcs=4", 23.0}};
  for (const auto& [setting, serviced] : cases) {
    build({setting});
    auto w = submit(kPe0Dma, MemOp::kWrite, slice(0, 0, 0), 2048);
    sim_->run();
    EXPECT_DOUBLE_EQ(ns(w->t_serviced), serviced) << setting;
  }
}

TEST_F(Fabric, HbmPseudoChannelSettingsMustBePowersOfTwo) {
  const std::pair<std::string, std::string> cases[] = {
      {"cube.components.hbm_ctrl.attrs.burst_bytes=384", "parameter 'burst_bytes' must be a power of two (got 384)"},
      {"cube.components.hbm_ctrl.attrs.num_pcs=6", "parameter 'num_pcs' must be a power of two (got 6)"},
      {"cube.memory_map.burst_bytes=384", "cube.memory_map.burst_bytes: must be a power of two"},
      {"cube.memory_map.hbm_channels_per_pe=6", "cube.memory_map.hbm_channels_per_pe: must be a power of two"}};
  for (const auto& c : cases)
    EXPECT_THAT(test::config_error([&] { build({c.first}); }), HasSubstr(c.second)) << c.first;
}

TEST_F(Fabric, PeDmaChannelsHoldOneTransferEachAndOverlapReadWithWrite) {
  const std::string dma = "sip0.cube0.pe0.pe_dma";
  auto w1 = submit(dma, MemOp::kWrite, slice(0, 0, 0), 4096);
  auto w2 = submit(dma, MemOp::kWrite, slice(0, 0, 4096), 4096);
  auto rd = submit(dma, MemOp::kRead, slice(0, 1, 0), 4096);
  sim_->run();
  ASSERT_EQ(client_.done.size(), 3u);
  EXPECT_EQ(w2->t_start, w1->t_done);  // the write channel is held for the round trip
  EXPECT_EQ(rd->t_start, 0);           // the read channel is independent
  EXPECT_EQ(sim_->stat(dma, "writes").count, 2u);
  EXPECT_EQ(sim_->stat(dma, "reads").count, 1u);
}

TEST_F(Fabric, PeLocalSramAndTcmAddressesAreServed) {
  auto sram = submit("sip0.cube0.pe0.pe_dma", MemOp::kWrite, ahbm::cube_sram_addr(0, 0, 0), 1024);
  auto tcm = submit("sip0.cube0.pe0.pe_dma", MemOp::kRead, ahbm::pe_tcm_addr(0, 0, 3, 0x400), 1024);
  sim_->run();
  EXPECT_TRUE(sram->completion.ok);
  EXPECT_TRUE(tcm->completion.ok);
  EXPECT_EQ(sim_->stat("sip0.cube0.sram", "requests").count, 1u);
  EXPECT_EQ(sim_->stat("sip0.cube0.pe3.pe_tcm", "reads").count, 1u);
}

TEST(AhbmInfo, EveryFabricBlockDescribesItself) {
  for (const char* impl : {"builtin.pcie_ep", "builtin.io_cpu", "builtin.m_cpu", "builtin.hbm_ctrl", "builtin.sram",
                           "builtin.pe_dma", "builtin.pe_tcm", "builtin.ucie", "builtin.noc", "builtin.switch"}) {
    auto r = test::run_kbsim(std::string("info ") + impl);
    EXPECT_EQ(r.code, 0) << impl << r.err;
    EXPECT_THAT(r.out, ::testing::AnyOf(HasSubstr("overhead_ns"), HasSubstr("bw_gbs"))) << impl;
  }
}

}  // namespace
}  // namespace kbsim
