// TCM tensors (docs/model.md, "The host runtime", "TCM tensors") on the
// default system, every component real: a tensor placed with space TCM lives
// in its PEs' allocatable TCM (above the scheduler-reserved part PE_TCM
// publishes), host transfers reach pe_tcm over the fabric, and a kernel
// tl.loads it through its VA from the PE's own TCM.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <utility>

#include "host_runtime.hpp"
#include "kbsim/ahbm/names.hpp"
#include "kbsim/ahbm/phys_addr.hpp"
#include "kbsim/pe/kernels.hpp"
#include "kbsim/testing.hpp"
#include "runtime_test_support.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

using rt::DPPolicy;
using rt::Space;
using rt::Split;

constexpr std::uint64_t kReserved = std::uint64_t{1} << 20;  // pe_tcm.reserved_kib's default: 1 MiB of 2 MiB

/// What each PE's kernel loaded, by (cube, pe).
std::map<std::pair<int, int>, std::vector<double>> loaded;

/// Loads its own shard of tensor argument 0 (f32) through the shard's VA.
void k_load_shard(tl::Program& tl, const tl::Args& args) {
  const tl::TensorArg& t = args.tensor(0);
  const tl::TensorArg::Shard* s =
      t.shard(static_cast<unsigned>(tl.program_id(1)), static_cast<unsigned>(tl.program_id(0)));
  if (!s) throw std::runtime_error("no shard here");
  tl::Tensor x = tl.load(s->ptr, s->shape, DType::kF32);
  std::vector<double>& out = loaded[{tl.program_id(1), tl.program_id(0)}];
  for (std::int64_t i = 0; i < x.shape().elements(); ++i) out.push_back(x.item(i));
}

/// kbsim's own plugins and this file's kernel, loaded once.
const testkit::Plugins& plugins() {
  static const std::unique_ptr<testkit::Plugins> p = [] {
    auto out = std::make_unique<testkit::Plugins>();
    PluginDescriptor here{};
    add_kernel(here, "tcm-test-load-shard", &k_load_shard, "loads its own shard of a f32 tensor");
    out->add(std::move(here), "tcm_test");
    return out;
  }();
  return *p;
}

class TcmTensors : public ::testing::Test {
 protected:
  TcmTensors() { build({}); }
  void build(const std::vector<std::string>& overrides) {
    rt_.reset();
    sys_ =
        plugins().build(plugins().load_topology(std::filesystem::path(KBSIM_SOURCE_DIR) / "topology.yaml", overrides));
    rt_ = std::make_unique<host_runtime::HostRuntime>(*sys_);
    loaded.clear();
  }
  static std::uint64_t tcm_pa(unsigned cube, unsigned pe, std::uint64_t offset) {
    return ahbm::pe_tcm_addr(0, cube, pe, offset);
  }
  std::uint64_t stat(const std::string& node, const std::string& name) { return sys_->stat(node, name).count; }

  std::unique_ptr<System> sys_;
  std::unique_ptr<host_runtime::HostRuntime> rt_;
};

using host_runtime_test::error_of;
using host_runtime_test::sample;

TEST_F(TcmTensors, ATcmTensorRoundTripsHostValuesThroughEachPesTcm) {
  const std::vector<double> values = sample(7 * 13);
  for (DType dtype : {DType::kF32, DType::kF16}) {
    SCOPED_TRACE(dtype_name(dtype));
    build({});
    rt::Tensor t =
        rt_->from_host({7, 13}, dtype, values, {Split::kRowWise, Split::kColumnWise, 2, 2, Space::kTcm}, "t");
    EXPECT_EQ(t.policy().space, Space::kTcm);
    ASSERT_EQ(t.shards().size(), 4u);
    for (const rt::ShardSpec& s : t.shards()) {
      // Each shard is the first block of its PE's allocatable TCM: just above the reserved part.
      EXPECT_EQ(s.pa, tcm_pa(s.cube, s.pe, kReserved));
      const ahbm::DecodeResult d = ahbm::decode(s.pa);
      ASSERT_TRUE(d.ok);
      EXPECT_EQ(d.addr.kind, ahbm::AddrKind::kPeLocal);
      EXPECT_EQ(d.addr.sub, static_cast<unsigned>(ahbm::PeSub::kTcm));
      EXPECT_EQ(d.addr.pe, s.pe);
      EXPECT_GE(d.addr.offset, kReserved);
      // The host's write reached that PE's pe_tcm over the fabric, through its pe_dma (request in, ack out).
      const std::string pe = ahbm::names::pe(0, s.cube, s.pe);
      EXPECT_EQ(stat(pe + ".pe_tcm", "writes"), 1u);
      EXPECT_EQ(stat(pe + ".pe_dma", "forwarded"), 2u);
    }
    EXPECT_EQ(rt_->read_values(t), values);
    EXPECT_EQ(stat("sip0.cube1.pe1.pe_tcm", "reads"), 1u);
  }
}

TEST_F(TcmTensors, AHostWriteToTcmTakesTheFabricTimeToItsAcknowledgement) {
  // 32 KiB to sip0.cube0.pe0's TCM through pcie_ep: the path of the HBM write of runtime_test's
  // WriteTakesTheFabricTimeToItsAcknowledgement up to the PE's router, then pe_to_router (256 GB/s) into pe_dma,
  // which stores and forwards it over pe_data (512 GB/s) to pe_tcm's write channel (512 GB/s).
  rt::Tensor t = rt_->empty({1, 8192}, DType::kF32, {.space = Space::kTcm});
  EXPECT_EQ(t.shards()[0].pa, tcm_pa(0, 0, kReserved));
  const Tick t0 = rt_->now();
  rt::TransferResult r = rt_->write(t, std::vector<std::byte>(t.nbytes(), std::byte{1}));
  EXPECT_TRUE(r.completion.ok);
  EXPECT_EQ(r.bytes, 32768u);
  EXPECT_EQ(r.t_submit, t0);
  EXPECT_GE(r.t_done - r.t_submit, ns_to_ticks(32768.0 / 256));  // at least the drain into the PE
  EXPECT_EQ(r.t_done - r.t_submit, ns_to_ticks(438.4));
}

TEST_F(TcmTensors, ExhaustingAPesTcmNamesThePeTheNeedAndTheLargestBlock) {
  // 1 MiB allocatable: 800000 bytes fit, 400000 more do not (248576 are left).
  rt::Tensor a = rt_->empty({1, 200000}, DType::kF32, {.space = Space::kTcm}, "a");
  const std::string e = error_of<SimError>([&] { rt_->empty({1, 100000}, DType::kF32, {.space = Space::kTcm}, "b"); });
  EXPECT_THAT(e, ::testing::StartsWith("allocator: sip0.cube0.pe0 allocatable TCM exhausted: need 400000 bytes, "
                                       "largest free block 248576 (at t="));
  // HBM is another pool: the same tensor fits there.
  rt::Tensor b = rt_->empty({1, 100000}, DType::kF32, {}, "b");
  EXPECT_EQ(b.shards()[0].pa, ahbm::pe_hbm_addr(0, 0, 0, 0, 6ull << 30));
  // The failed tensor took nothing; another PE's TCM is its own pool.
  const DPPolicy two{Split::kReplicate, Split::kReplicate, 2, 1, Space::kTcm};
  rt::Tensor d = rt_->empty({1, 1000}, DType::kF32, two, "d");
  EXPECT_EQ(d.shards()[0].pa, tcm_pa(0, 0, kReserved + 800000));
  EXPECT_EQ(d.shards()[1].pa, tcm_pa(0, 1, kReserved));
}

TEST_F(TcmTensors, FreeingReturnsTheTcmForTheNextTensorFirstFit) {
  rt::Tensor a = rt_->empty({1, 1000}, DType::kF32, {.space = Space::kTcm}, "a");  // 4000 bytes: 4032 of TCM
  rt::Tensor b = rt_->empty({1, 10}, DType::kF32, {.space = Space::kTcm}, "b");
  EXPECT_EQ(a.shards()[0].pa, tcm_pa(0, 0, kReserved));
  EXPECT_EQ(b.shards()[0].pa, tcm_pa(0, 0, kReserved + 4032));
  rt_->free(a);
  rt::Tensor c = rt_->empty({1, 16}, DType::kF32, {.space = Space::kTcm}, "c");  // first fit: a's place
  rt::Tensor d = rt_->empty({1, 1000}, DType::kF32, {.space = Space::kTcm}, "d");
  EXPECT_EQ(c.shards()[0].pa, tcm_pa(0, 0, kReserved));
  EXPECT_EQ(d.shards()[0].pa, tcm_pa(0, 0, kReserved + 4032 + 64));  // a's remainder is too small
  // The whole allocatable TCM is one block again once everything is freed.
  for (rt::Tensor* t : {&b, &c, &d}) rt_->free(*t);
  rt::Tensor whole = rt_->empty({1, 1 << 18}, DType::kF32, {.space = Space::kTcm}, "whole");  // exactly 1 MiB
  EXPECT_EQ(whole.shards()[0].pa, tcm_pa(0, 0, kReserved));
}

TEST_F(TcmTensors, TheReservedPartIsPeTcmsParameter) {
  build({"cube.pe_template.components.pe_tcm.attrs.reserved_kib=1536"});
  rt::Tensor a = rt_->empty({1, 16}, DType::kF32, {.space = Space::kTcm}, "a");
  EXPECT_EQ(a.shards()[0].pa, tcm_pa(0, 0, 1536 * 1024));
  EXPECT_THAT(error_of<SimError>([&] {
                rt_->empty({1, 1 << 17}, DType::kF32, {.space = Space::kTcm});
              }),
              HasSubstr("sip0.cube0.pe0 allocatable TCM exhausted: need 524288 bytes, largest free block 524224"));
  build({"cube.pe_template.components.pe_tcm.attrs.reserved_kib=2048"});  // nothing left for the host
  EXPECT_THAT(error_of<SimError>([&] {
                rt_->empty({1, 1}, DType::kF32, {.space = Space::kTcm});
              }),
              HasSubstr("sip0.cube0.pe0 allocatable TCM exhausted: need 64 bytes, largest free block 0"));
  EXPECT_THAT(error_of<ConfigError>([&] { build({"cube.pe_template.components.pe_tcm.attrs.reserved_kib=4096"}); }),
              HasSubstr("parameter 'reserved_kib' must be >= 0 and at most size_kib"));
  // Below the kernels' scratch, host tensors would overlap it: the PE_CPU refuses the system.
  EXPECT_THAT(error_of<SimError>([&] { build({"cube.pe_template.components.pe_tcm.attrs.reserved_kib=512"}); }),
              HasSubstr("t=0 ns: sip0.cube0.pe0.pe_cpu: scratch_kib (1024 KiB) exceeds the reserved part of "
                        "sip0.cube0.pe0.pe_tcm (reserved_kib 512): tensors the host places in the TCM would overlap "
                        "kernel scratch"));
}

TEST_F(TcmTensors, AKernelLoadsATcmTensorThroughItsVaFromItsOwnTcm) {
  std::vector<double> values(8 * 4);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  // Rows over 2 cubes, columns over 2 PEs: shards of (4, 2), one per PE.
  rt::Tensor t =
      rt_->from_host({8, 4}, DType::kF32, values, {Split::kRowWise, Split::kColumnWise, 2, 2, Space::kTcm}, "t");
  const rt::LaunchResult& r = rt_->wait(rt_->launch("tcm-test-load-shard", {t}));
  ASSERT_TRUE(r.completion.ok) << r.completion.error_message;
  ASSERT_EQ(r.pes.size(), 4u);
  EXPECT_EQ(loaded[std::make_pair(0, 0)], (std::vector<double>{0, 1, 4, 5, 8, 9, 12, 13}));
  EXPECT_EQ(loaded[std::make_pair(0, 1)], (std::vector<double>{2, 3, 6, 7, 10, 11, 14, 15}));
  EXPECT_EQ(loaded[std::make_pair(1, 0)], (std::vector<double>{16, 17, 20, 21, 24, 25, 28, 29}));
  EXPECT_EQ(loaded[std::make_pair(1, 1)], (std::vector<double>{18, 19, 22, 23, 26, 27, 30, 31}));
  for (const ahbm::PeResult& p : r.pes) {
    // The load is a DMA_READ whose source is the PE's own TCM: pe_dma -> pe_data link -> pe_tcm's read channel and
    // back, no router and no HBM.
    const std::string pe = ahbm::names::pe(p.pe.sip, p.pe.cube, p.pe.pe);
    EXPECT_EQ(stat(pe + ".pe_dma", "reads"), 1u) << pe;
    EXPECT_EQ(stat(pe + ".pe_tcm", "reads"), 1u) << pe;
    EXPECT_EQ(p.commands, 1u);
    EXPECT_GT(p.dma_ns, 0.0);
    EXPECT_DOUBLE_EQ(p.dma_ns, 0.126);  // 32 B over the PE's own 512 GB/s TCM link, there and back
  }
}

TEST_F(TcmTensors, OnlyHbmAndTcmHoldHostTensors) {
  EXPECT_EQ(error_of<BenchError>([&] {
              rt_->empty({2, 2}, DType::kF32, {.space = static_cast<Space>(7)}, "s");
            }),
            "BAD_USE: empty: tensor 's': the host runtime places tensors in HBM or in TCM only");
}

}  // namespace
}  // namespace kbsim
