// PCIE_EP as the entry of host memory requests (docs/model.md, "Memory
// transactions"), on the default system: it refuses a request stated for
// another SIP's device (target_device) and a write whose address is not the
// memory it declares (dst_mem_kind), before anything enters the fabric.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kbsim/ahbm/memory.hpp"
#include "kbsim/ahbm/phys_addr.hpp"
#include "kbsim/testing.hpp"

namespace kbsim {
namespace {

using ahbm::MemKind;
using ahbm::MemOp;
using ahbm::MemRequest;

/// kbsim's own plugins, loaded once for the file.
const testkit::Plugins& plugins() {
  static const testkit::Plugins p;
  return p;
}

struct Collector final : ahbm::MemClient {
  std::vector<Ref<MemRequest>> done;
  void on_complete(MemRequest& r) override { done.emplace_back(&r); }
};

class PcieEp : public ::testing::Test {
 protected:
  void SetUp() override { sim_ = plugins().build(plugins().load_topology(KBSIM_SOURCE_DIR "/topology.yaml")); }
  Ref<MemRequest> submit(MemOp op, std::uint64_t pa, unsigned device, MemKind kind = MemKind::kAuto) {
    auto r = make_message<MemRequest>();
    r->op = op;
    r->pa = pa;
    r->nbytes = 256;
    r->target_device = device;
    r->dst_mem_kind = kind;
    ahbm::as_initiator(sim_->component(kEp))->submit(r, &client_);
    return r;
  }
  static constexpr const char* kEp = "sip0.io0.pcie_ep";
  const std::uint64_t hbm_ = ahbm::hbm_addr(0, 0, 0);         // cube 0, PE 0's HBM slice
  const std::uint64_t tcm_ = ahbm::pe_tcm_addr(0, 0, 1, 0);   // cube 0, PE 1's TCM
  const std::uint64_t sram_ = ahbm::cube_sram_addr(0, 0, 0);  // cube 0's SRAM
  std::unique_ptr<System> sim_;
  Collector client_;
};

TEST_F(PcieEp, RefusesARequestForAnotherDeviceBeforeTheFabric) {
  auto write = submit(MemOp::kWrite, hbm_, 1);
  auto read = submit(MemOp::kRead, hbm_, 7);
  sim_->run();
  ASSERT_EQ(client_.done.size(), 2u);
  EXPECT_FALSE(write->completion.ok);
  EXPECT_EQ(write->completion.error_code, "WRONG_DEVICE");
  EXPECT_EQ(write->completion.error_message, "a memory write for sip:1 reached sip0.io0.pcie_ep, which is on sip:0");
  EXPECT_EQ(read->completion.error_code, "WRONG_DEVICE");
  EXPECT_EQ(read->completion.error_message, "a memory read for sip:7 reached sip0.io0.pcie_ep, which is on sip:0");
  EXPECT_DOUBLE_EQ(ticks_to_ns(write->t_done), 5.0);  // refused after the pcie_ep overhead
  EXPECT_EQ(sim_->stat(kEp, "host_errors").count, 2u);
  EXPECT_EQ(sim_->stat(kEp, "host_requests").count, 0u);
  EXPECT_EQ(sim_->stat("sip0.cube0.hbm_ctrl.pe0", "writes").count, 0u);
}

TEST_F(PcieEp, ARequestForItsOwnDeviceOrNoneStatedGoesThroughInTheSameTime) {
  auto own = submit(MemOp::kWrite, hbm_, 0);
  sim_->run();
  SetUp();
  auto unstated = submit(MemOp::kWrite, hbm_, ahbm::kAnyDevice);
  sim_->run();
  EXPECT_TRUE(own->completion.ok) << own->completion.error_message;
  EXPECT_TRUE(unstated->completion.ok) << unstated->completion.error_message;
  EXPECT_EQ(own->t_done, unstated->t_done);
}

TEST_F(PcieEp, RefusesAWriteToMemoryOfAnotherKindThanItDeclares) {
  auto to_tcm = submit(MemOp::kWrite, hbm_, 0, MemKind::kTcm);
  auto to_hbm = submit(MemOp::kWrite, tcm_, 0, MemKind::kHbm);
  auto sram = submit(MemOp::kWrite, sram_, 0, MemKind::kHbm);
  sim_->run();
  ASSERT_EQ(client_.done.size(), 3u);
  EXPECT_EQ(to_tcm->completion.error_code, "MEM_KIND_MISMATCH");
  EXPECT_EQ(to_tcm->completion.error_message,
            "address " + ahbm::hex(hbm_) + ": the write's dst_mem_kind is TCM but the address is HBM");
  EXPECT_EQ(to_hbm->completion.error_code, "MEM_KIND_MISMATCH");
  EXPECT_EQ(to_hbm->completion.error_message,
            "address " + ahbm::hex(tcm_) + ": the write's dst_mem_kind is HBM but the address is TCM");
  EXPECT_EQ(sram->completion.error_message,
            "address " + ahbm::hex(sram_) + ": the write's dst_mem_kind is HBM but the address is CUBE_SRAM");
  for (const auto& r : {to_tcm, to_hbm, sram}) EXPECT_DOUBLE_EQ(ticks_to_ns(r->t_done), 5.0);
  EXPECT_EQ(sim_->stat(kEp, "host_errors").count, 3u);
}

TEST_F(PcieEp, AWriteOfTheDeclaredKindOrAutoAndAnyReadAreServed) {
  const std::vector<Ref<MemRequest>> ok = {
      submit(MemOp::kWrite, hbm_, 0, MemKind::kHbm), submit(MemOp::kWrite, tcm_, 0, MemKind::kTcm),
      submit(MemOp::kWrite, hbm_, 0, MemKind::kAuto), submit(MemOp::kWrite, tcm_, 0, MemKind::kAuto),
      submit(MemOp::kRead, hbm_, 0, MemKind::kTcm)};  // reads declare no destination memory: not checked
  sim_->run();
  ASSERT_EQ(client_.done.size(), ok.size());
  for (const auto& r : ok) EXPECT_TRUE(r->completion.ok) << r->completion.error_message;
  EXPECT_EQ(sim_->stat(kEp, "host_errors").count, 0u);
}

}  // namespace
}  // namespace kbsim
