// The host runtime on the default AHBM system (topology.yaml). Memory traffic
// goes through the real pcie_ep and fabric. Host commands go to a stand-in
// io_cpu (CommandSink) that completes each one 50 ns after it arrives and
// records it, so these tests do not depend on the control plane; the PE
// components are plain forwarders. One test uses the real io_cpu and pe_mmu.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "host_runtime.hpp"
#include "kbsim/ahbm/names.hpp"
#include "kbsim/pe/kernels.hpp"
#include "kbsim/testing.hpp"
#include "runtime_test_support.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

using ahbm::HostCommand;
using rt::DPPolicy;
using rt::Split;

constexpr Tick kSinkDelay = 50 * kPsPerNs;

/// Stand-in io_cpu: completes every command kSinkDelay after submission (a
/// launch with one PeResult per target), except kernel "hang" (never) and
/// kernel "fail" (with an error).
class CommandSink final : public Component, public ahbm::CommandTarget {
 public:
  using Component::Component;
  static ComponentInfo info() {
    ComponentInfo i;
    i.type = "command_sink";
    i.summary = "records host commands and completes them after 50 ns";
    i.ports = {{"*", "any link"}};
    return i;
  }

  void submit(Ref<HostCommand> cmd, HostCommand::Client* client) override {
    cmd->client = client;
    received.push_back(cmd);
    if (cmd->kernel != "hang") schedule(kSinkDelay, 0, std::move(cmd));
  }
  void on_timer(std::uint64_t, Ref<Message> msg) override {
    auto& cmd = msg->as<HostCommand>();
    if (cmd.kind == HostCommand::Kind::kLaunch)
      for (auto it = cmd.targets.rbegin(); it != cmd.targets.rend(); ++it) {
        kbsim::ahbm::PeResult r;
        r.pe = *it;
        cmd.results.push_back(r);
      }
    if (cmd.kernel == "fail") cmd.completion = {false, "KERNEL_FAILED", "boom"};
    cmd.t_done = now();
    cmd.client->on_complete(cmd);
  }

  std::vector<Ref<HostCommand>> received;
};

void noop_kernel(tl::Program&, const tl::Args&) {}

/// A bench on the configured system (the runtime is its service).
BenchInfo bench_info(const std::string& name, const std::string& summary) {
  BenchInfo i;
  i.name = name;
  i.summary = summary;
  i.reads_topology = true;
  return i;
}

class NoWorkBench final : public Bench {
 public:
  static BenchInfo info() { return bench_info("test-no-work", "uses the runtime, submits nothing"); }
  void run(BenchContext& ctx) override { ctx.configured().service<rt::Runtime>(); }
};

class OneTensorBench final : public Bench {
 public:
  static BenchInfo info() { return bench_info("test-one-tensor", "creates one tensor"); }
  void run(BenchContext& ctx) override { ctx.configured().service<rt::Runtime>().empty({4, 4}, DType::kF16); }
};

/// kbsim's own plugins, and this file's stand-in io_cpu (test.command_sink), kernel and benches, loaded once.
const testkit::Plugins& plugins() {
  static const std::unique_ptr<testkit::Plugins> loaded = [] {
    auto p = std::make_unique<testkit::Plugins>();
    PluginDescriptor here{};
    add_component<CommandSink>(here);
    add_kernel(here, "test-noop", &noop_kernel, "does nothing");
    add_bench<NoWorkBench>(here);
    add_bench<OneTensorBench>(here);
    p->add(std::move(here), "test");
    return p;
  }();
  return *loaded;
}

const std::filesystem::path kTopology = std::filesystem::path(KBSIM_SOURCE_DIR) / "topology.yaml";

/// The PE components being written elsewhere become forwarders; `io_cpu`
/// replaces the io_cpu unless empty, and pe_mmu stays real with `real_mmu`.
std::vector<std::string> overrides(const std::string& io_cpu, bool real_mmu) {
  std::vector<std::string> o;
  for (const char* c : {"pe_cpu", "pe_scheduler", "pe_fetch_store", "pe_gemm", "pe_math", "pe_mmu"})
    if (!real_mmu || std::string(c) != "pe_mmu")
      o.push_back(std::string("cube.pe_template.components.") + c + "={impl: builtin.forwarding}");
  if (!io_cpu.empty()) o.push_back("sip.io_chiplets.0.components.io_cpu={impl: " + io_cpu + "}");
  return o;
}

class RuntimeTest : public ::testing::Test {
 protected:
  RuntimeTest()
      : sys_(plugins().build(plugins().load_topology(kTopology, overrides("test.command_sink", false)))), rt_(*sys_) {}

  CommandSink& sink() { return dynamic_cast<CommandSink&>(sys_->component(ahbm::names::io(0, 0, "io_cpu"))); }
  static std::uint64_t slice_pa(unsigned cube, unsigned pe, std::uint64_t offset) {
    return ahbm::pe_hbm_addr(0, cube, pe, offset, 6ull << 30);
  }

  std::unique_ptr<System> sys_;
  host_runtime::HostRuntime rt_;
};

using host_runtime_test::error_of;
using host_runtime_test::sample;

TEST(RuntimeAllocator, FirstFitRoundsToTheGranuleAndFreeingCoalesces) {
  host_runtime::FreeList f(0x1000, 1024, 64);
  EXPECT_EQ(f.allocate(100), 0x1000u);  // 128 bytes
  EXPECT_EQ(f.allocate(64), 0x1080u);
  EXPECT_EQ(f.allocate(1), 0x10c0u);
  EXPECT_EQ(f.largest_free(), 1024u - 256);
  EXPECT_FALSE(f.allocate(1024 - 255).has_value());
  f.release(0x1000, 100);
  f.release(0x10c0, 1);
  EXPECT_EQ(f.largest_free(), 1024u - 192);  // the last block joined the tail
  EXPECT_EQ(f.allocate(128), 0x1000u);       // first fit: the freed head
  f.release(0x1000, 128);
  f.release(0x1080, 64);
  EXPECT_EQ(f.largest_free(), 1024u);  // all three joined again
}

TEST_F(RuntimeTest, FromHostThenReadRoundTripsEveryPolicyAndDtype) {
  const std::vector<DPPolicy> policies = {{Split::kReplicate, Split::kReplicate, 2, 2},
                                          {Split::kColumnWise, Split::kColumnWise, 2, 2},
                                          {Split::kRowWise, Split::kRowWise, 2, 2},
                                          {Split::kRowWise, Split::kColumnWise, 2, 2},
                                          {Split::kReplicate, Split::kColumnWise, 2, 2}};
  const std::vector<double> values = sample(7 * 13);
  for (DType dtype : {DType::kF32, DType::kF16}) {
    for (std::size_t k = 0; k < policies.size(); ++k) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " policy " + std::to_string(k));
      rt::Tensor t = rt_.from_host({7, 13}, dtype, values, policies[k]);
      EXPECT_EQ(t.shards().size(), 4u);
      EXPECT_EQ(rt_.read_values(t), values);
    }
  }
}

TEST_F(RuntimeTest, TensorCreationMapsEveryShardOnEveryHolderOverIoCpu) {
  rt::Tensor t = rt_.empty({4, 6}, DType::kF32, {Split::kColumnWise, Split::kRowWise, 2, 2}, "w");
  EXPECT_EQ(t.name(), "w");
  EXPECT_EQ(t.va(), 0x1'0000'0000u);
  EXPECT_EQ(t.info().va_bytes, 4096u);  // 4 pieces of 24 bytes at 64-byte steps, one page
  ASSERT_EQ(sink().received.size(), 1u);
  const HostCommand& cmd = *sink().received[0];
  EXPECT_EQ(cmd.kind, HostCommand::Kind::kMmuMap);
  EXPECT_EQ(cmd.correlation_id, 1u);
  EXPECT_EQ(cmd.targets, (std::vector<ahbm::PeRef>{{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {0, 1, 1}}));
  ASSERT_EQ(cmd.entries->size(), 16u);
  for (std::size_t i = 0; i < 16; ++i) {
    const ahbm::MmuEntry& e = (*cmd.entries)[i];
    const rt::ShardSpec& s = t.shards()[i % 4];
    EXPECT_EQ(e.pe, cmd.targets[i / 4]);
    EXPECT_EQ(e.va, t.va() + 64 * (i % 4));
    EXPECT_EQ(e.va, s.va);
    EXPECT_EQ(e.pa, slice_pa(s.cube, s.pe, 0));
    EXPECT_EQ(e.size, 24u);
  }
  EXPECT_EQ(rt_.now(), kSinkDelay);  // the blocking call ran the system until the map completed
  EXPECT_EQ(rt_.submitted(), 1u);
}

TEST_F(RuntimeTest, WriteTakesTheFabricTimeToItsAcknowledgement) {
  // 32 KiB to sip0.cube0.pe0 through pcie_ep. The last burst commits at
  // 295.20 ns (kbsim probe h2d-1hop: 23 ns of overheads, 0.2 ns of wire and
  // 256 ns draining at 128 GB/s, plus the store-and-forward pipeline). The
  // 0-byte acknowledgement leaves hbm_ctrl then (overhead 0) and returns
  // through r0c0 (2 ns), cube ucie-N (8 ns), the 0.2 ns seam and io_ucie-P0
  // (8 ns) to pcie_ep, which pays its 5 ns again on the response.
  rt::Tensor t = rt_.empty({1, 8192}, DType::kF32);
  const Tick t0 = rt_.now();
  rt::TransferResult r = rt_.write(t, std::vector<std::byte>(t.nbytes(), std::byte{1}));
  EXPECT_TRUE(r.completion.ok);
  EXPECT_EQ(r.bytes, 32768u);
  EXPECT_EQ(r.t_submit, t0);
  EXPECT_EQ(r.t_done - r.t_submit, ns_to_ticks(295.20 + 2 + 8 + 0.2 + 8 + 5));  // 318.40 ns
  EXPECT_EQ(rt_.now(), r.t_done);
}

TEST_F(RuntimeTest, CorrelationIdsAndSubmittedCountEveryHostSubmission) {
  rt::Tensor a = rt_.zeros({2, 2}, DType::kF16);  // 1: MMU map, 2: write
  rt_.read(a);                                    // 3: read
  rt::LaunchHandle h = rt_.launch("test-noop", {a});
  EXPECT_EQ(h.id, 4u);
  EXPECT_EQ(rt_.submitted(), 4u);
}

TEST_F(RuntimeTest, ZerosOverwritesMemoryAFreedTensorLeftBehind) {
  rt::Tensor a = rt_.from_host({2, 3}, DType::kF32, std::vector<double>(6, 5.0));
  const std::uint64_t pa = a.shards()[0].pa;
  rt_.free(a);
  rt::Tensor z = rt_.zeros({2, 3}, DType::kF32);
  EXPECT_EQ(z.shards()[0].pa, pa);
  EXPECT_EQ(rt_.read_values(z), std::vector<double>(6, 0.0));
}

TEST_F(RuntimeTest, FreeThenAllocateReusesMemoryFirstFit) {
  rt::Tensor a = rt_.empty({1, 1000}, DType::kF32);  // 4000 bytes: 4032 in the slice, one VA page
  rt::Tensor b = rt_.empty({1, 10}, DType::kF32);
  EXPECT_EQ(a.shards()[0].pa, slice_pa(0, 0, 0));
  EXPECT_EQ(b.shards()[0].pa, slice_pa(0, 0, 4032));
  EXPECT_EQ(b.va(), 0x1'0000'1000u);
  rt_.free(a);
  EXPECT_TRUE(a.info().freed);
  rt::Tensor c = rt_.empty({1, 16}, DType::kF32);  // first fit: a's place
  rt::Tensor d = rt_.empty({1, 1000}, DType::kF32);
  EXPECT_EQ(c.shards()[0].pa, slice_pa(0, 0, 0));
  EXPECT_EQ(c.va(), 0x1'0000'0000u);
  EXPECT_EQ(d.shards()[0].pa, slice_pa(0, 0, 4032 + 64));  // a's remainder is too small
  EXPECT_EQ(d.va(), 0x1'0000'2000u);
  const HostCommand& unmap = *sink().received[2];
  EXPECT_EQ(unmap.kind, HostCommand::Kind::kMmuUnmap);
  EXPECT_EQ(unmap.entries->at(0).va, 0x1'0000'0000u);
  EXPECT_EQ(error_of<BenchError>([&] { rt_.read(a); }), "BAD_USE: read: tensor 'tensor1' was freed");
}

TEST_F(RuntimeTest, HbmExhaustionNamesTheSliceTheNeedAndTheLargestBlock) {
  rt_.empty({1, 256}, DType::kF32);
  EXPECT_EQ(error_of<SimError>([&] {
              rt_.empty({1, std::int64_t{1} << 31}, DType::kF32);
            }),
            "allocator: sip0.cube0.pe0 HBM slice exhausted: need 8589934592 bytes, largest free block 6442449920 "
            "(at t=50 ns)");
}

TEST_F(RuntimeTest, VirtualExhaustionGivesBackTheHbmItTook) {
  // 70 GiB split over all 128 PEs fits their slices but not the 64 GiB VA range.
  const DPPolicy all{Split::kColumnWise, Split::kColumnWise, 0, 0};
  EXPECT_EQ(error_of<SimError>([&] {
              rt_.empty({1, std::int64_t{70} << 28}, DType::kF32, all);
            }),
            "allocator: device virtual address space exhausted: need 75161927680 bytes, largest free block "
            "68719476736 (at t=0 ns)");
  rt::Tensor whole = rt_.empty({1, std::int64_t{3} << 29}, DType::kF32);  // a whole 6 GiB slice
  EXPECT_EQ(whole.shards()[0].pa, slice_pa(0, 0, 0));
}

TEST_F(RuntimeTest, BadUseIsReportedWithTheTensor) {
  rt::Tensor t = rt_.empty({2, 2}, DType::kF16, {}, "x");
  EXPECT_EQ(error_of<BenchError>([&] { rt_.write(t, std::vector<std::byte>(7)); }),
            "BAD_USE: write: tensor 'x' holds 8 bytes, got 7");
  EXPECT_EQ(error_of<BenchError>([&] {
              rt_.from_host({2, 3}, DType::kF16, std::vector<double>(5));
            }),
            "BAD_USE: from_host: shape (2, 3) needs 6 values, got 5");
  rt::Tensor none;
  EXPECT_EQ(error_of<BenchError>([&] { rt_.read(none); }), "BAD_USE: read: an empty tensor handle");
}

TEST_F(RuntimeTest, LaunchOfAnUnknownKernelListsTheKnownOnes) {
  std::string e = error_of<BenchError>([&] { rt_.launch("no-such-kernel", {}); });
  EXPECT_THAT(e, HasSubstr("BAD_USE: launch: unknown kernel 'no-such-kernel' (known: "));
  EXPECT_THAT(e, HasSubstr("test-noop"));
  EXPECT_EQ(rt_.submitted(), 0u);
}

TEST_F(RuntimeTest, LaunchSubmitsOneCommandWithTheArgumentsAndTheGrid) {
  rt::Tensor a = rt_.empty({4, 6}, DType::kF16, {Split::kRowWise, Split::kColumnWise, 2, 2}, "a");
  rt::LaunchHandle h = rt_.launch("test-noop", {a, std::int64_t{7}, 2.5});
  ASSERT_EQ(sink().received.size(), 2u);
  const HostCommand& cmd = *sink().received[1];
  EXPECT_EQ(cmd.kind, HostCommand::Kind::kLaunch);
  EXPECT_EQ(cmd.correlation_id, h.id);
  EXPECT_EQ(cmd.kernel, "test-noop");
  EXPECT_EQ(cmd.grid_cubes, 2u);
  EXPECT_EQ(cmd.grid_pes, 2u);
  EXPECT_EQ(cmd.targets, (std::vector<ahbm::PeRef>{{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {0, 1, 1}}));
  ASSERT_EQ(cmd.args->size(), 3u);
  const tl::TensorArg& ta = cmd.args->tensor(0);
  EXPECT_EQ(ta.ptr, a.va());
  EXPECT_EQ(ta.shape, (Shape{4, 6}));
  ASSERT_EQ(ta.shards.size(), 4u);
  const tl::TensorArg::Shard* s = ta.shard(1, 1);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->ptr, a.va() + 3 * 64);
  EXPECT_EQ(s->offset_bytes, (2u * 6 + 3) * 2);
  EXPECT_EQ(s->nbytes, 12u);
  EXPECT_EQ(s->shape, (Shape{2, 3}));
  EXPECT_EQ(cmd.args->i64(1), 7);
  EXPECT_EQ(cmd.args->f64(2), 2.5);

  const Tick t_submit = rt_.now();
  const rt::LaunchResult& r = rt_.wait(h);
  EXPECT_EQ(r.kernel, "test-noop");
  EXPECT_EQ(r.t_submit, t_submit);
  EXPECT_EQ(r.t_done, t_submit + kSinkDelay);
  ASSERT_EQ(r.pes.size(), 4u);  // the sink answers in reverse; the result is sorted
  EXPECT_EQ(r.pes.front().pe, (ahbm::PeRef{0, 0, 0}));
  EXPECT_EQ(r.pes.back().pe, (ahbm::PeRef{0, 1, 1}));
}

TEST_F(RuntimeTest, LaunchGridDefaultsToOnePeAndHonoursTheOptions) {
  rt::LaunchHandle h1 = rt_.launch("test-noop", {std::int64_t{1}});
  rt::LaunchHandle h2 = rt_.launch("test-noop", {}, {.sip = 1, .grid_pes = 3, .grid_cubes = 1});
  rt_.wait_all();
  EXPECT_EQ(sink().received[0]->targets, (std::vector<ahbm::PeRef>{{0, 0, 0}}));
  EXPECT_EQ(rt_.wait(h1).pes.size(), 1u);
  EXPECT_EQ(rt_.wait(h2).pes.size(), 3u);
  EXPECT_EQ(error_of<BenchError>([&] { rt_.launch("test-noop", {}, {.grid_pes = 9}); }),
            "BAD_USE: launch of 'test-noop': a grid of 1 cubes x 9 PEs does not fit a SIP of 16 cubes x 8 PEs");
}

TEST_F(RuntimeTest, IntegersEqualToAGlobalDimBecomeTheLocalDimUnlessTurnedOff) {
  // a (8, 6) rows over 2 cubes, columns over 3 PEs: first shard (4, 2); b (6, 10) columns over 2 PEs: (6, 5).
  rt::Tensor a = rt_.empty({8, 6}, DType::kF16, {Split::kRowWise, Split::kColumnWise, 3, 2}, "a");
  rt::Tensor b = rt_.empty({6, 10}, DType::kF16, {Split::kReplicate, Split::kColumnWise, 2, 1}, "b");
  const std::vector<rt::Arg> args = {a, b, std::int64_t{8}, std::int64_t{6}, std::int64_t{10}, std::int64_t{7}};
  rt_.launch("test-noop", args);
  rt_.launch("test-noop", args, {.auto_dim_remap = false});
  rt_.wait_all();
  const auto ints = [&](std::size_t k) {
    const tl::Args& got = *sink().received[k]->args;
    return std::vector<std::int64_t>{got.i64(2), got.i64(3), got.i64(4), got.i64(5)};
  };
  // 6 is a's column count first (a's placement changes it), so b's unchanged 6 rows do not decide.
  EXPECT_EQ(ints(2), (std::vector<std::int64_t>{4, 2, 5, 7}));
  EXPECT_EQ(ints(3), (std::vector<std::int64_t>{8, 6, 10, 7}));
}

TEST_F(RuntimeTest, AHostReadWaitsForTheLaunchesRunningOnItsSip) {
  rt::Tensor t = rt_.zeros({4, 4}, DType::kF16, {}, "t");
  const Tick t0 = rt_.now();
  rt_.launch("test-noop", {t});                                             // on SIP 0: the read must wait for it
  rt_.launch("test-noop", {}, {.sip = 1, .grid_pes = 1, .grid_cubes = 1});  // on SIP 1: no barrier for t's read
  rt::TransferResult r;
  rt_.read(t, &r);
  EXPECT_EQ(r.t_submit, t0 + kSinkDelay);  // the SIP 0 launch's end, no later
}

TEST_F(RuntimeTest, SetDeviceScopesPlacementAndLaunches) {
  rt_.set_device(1);
  EXPECT_EQ(rt_.current_device(), 1u);
  rt::Tensor t = rt_.empty({4, 4}, DType::kF16, {}, "t");
  EXPECT_EQ(t.shards().front().sip, 1u);
  const rt::LaunchResult& r = rt_.wait(rt_.launch("test-noop", {t}));
  EXPECT_EQ(r.pes.front().pe, (ahbm::PeRef{1, 0, 0}));
  EXPECT_EQ(error_of<BenchError>([&] { rt_.set_device(7); }), "BAD_USE: set_device(7): the system has 2 SIPs");
}

TEST_F(RuntimeTest, UnknownKernelsCanBeAllowedForThePeSideCheck) {
  rt_.allow_unknown_kernels();
  rt::LaunchHandle h = rt_.launch("not-registered", {});
  EXPECT_EQ(sink().received.back()->kernel, "not-registered");
  EXPECT_TRUE(rt_.wait(h).completion.ok);
}

TEST_F(RuntimeTest, WaitReportsAStuckOrFailedLaunch) {
  rt_.allow_unknown_kernels();
  rt::LaunchHandle hang = rt_.launch("hang", {}, {.grid_pes = 2});
  EXPECT_EQ(error_of<SimError>([&] { rt_.wait(hang); }),
            "simulation stuck (at t=0 ns): launch of 'hang' (correlation 1) never completed; 2 PEs pending");
  rt::LaunchHandle fail = rt_.launch("fail", {});
  EXPECT_EQ(error_of<SimError>([&] { rt_.wait(fail); }),
            "launch of 'fail' (correlation 2) failed: KERNEL_FAILED: boom (at t=50 ns)");
  EXPECT_EQ(error_of<BenchError>([&] { rt_.wait({99}); }), "BAD_USE: wait: no launch has handle 99");
}

TEST_F(RuntimeTest, CopyWritesTheSourceValuesWithTheDestinationsPlacement) {
  const std::vector<double> values = sample(7 * 13);
  for (DType dtype : {DType::kF32, DType::kF16}) {
    SCOPED_TRACE(dtype_name(dtype));
    rt::Tensor src = rt_.from_host({7, 13}, dtype, values, {Split::kColumnWise, Split::kColumnWise, 2, 2}, "src");
    rt::Tensor dst = rt_.empty({7, 13}, dtype, {Split::kRowWise, Split::kReplicate, 2, 2}, "dst");
    rt::TransferResult r = rt_.copy(dst, src);
    EXPECT_EQ(r.bytes, 2 * dst.nbytes());  // dst's pieces: two row halves, each on two PEs
    EXPECT_EQ(rt_.read_values(dst), values);
    EXPECT_EQ(rt_.read_values(src), values);
  }
}

TEST_F(RuntimeTest, SlicesReadAndWriteARegionOfOneShard) {
  // (8, 6) f32, rows over 2 PEs: rows 0-3 on PE 0, 4-7 on PE 1.
  std::vector<double> values(48);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  rt::Tensor t = rt_.from_host({8, 6}, DType::kF32, values, {Split::kReplicate, Split::kRowWise, 2, 1}, "t");
  EXPECT_EQ(rt_.read_slice(t, {.row = 5, .col = 1, .rows = 2, .cols = 3}),
            (std::vector<double>{31, 32, 33, 37, 38, 39}));
  const rt::TransferResult w =
      rt_.write_slice(t, {.row = 4, .col = 4, .rows = 2, .cols = 2}, std::vector<double>{-1, -2, -3, -4});
  EXPECT_EQ(w.bytes, 16u);                                                                   // two rows of two f32
  rt_.write_slice(t, {.row = 0, .col = 0, .rows = 1, .cols = 6}, std::vector<double>{9.5});  // one value fills
  std::vector<double> want = values;
  std::fill(want.begin(), want.begin() + 6, 9.5);
  want[28] = -1, want[29] = -2, want[34] = -3, want[35] = -4;
  EXPECT_EQ(rt_.read_values(t), want);
}

TEST_F(RuntimeTest, ASliceWriteReachesEveryReplica) {
  // Replicated on 2 PEs of 2 cubes: four copies of one piece, each written.
  rt::Tensor t = rt_.zeros({4, 4}, DType::kF16, {Split::kReplicate, Split::kReplicate, 2, 2}, "r");
  const rt::TransferResult w = rt_.write_slice(t, {.row = 1, .col = 0, .rows = 2, .cols = 4}, std::vector<double>{3});
  EXPECT_EQ(w.bytes, 4u * 2 * 4 * 2);  // 4 replicas x 2 rows x 4 f16
  EXPECT_EQ(rt_.read_slice(t, {.row = 0, .col = 0, .rows = 4, .cols = 1}), (std::vector<double>{0, 3, 3, 0}));
}

TEST_F(RuntimeTest, ASliceAcrossShardsIsNotSupportedAndOneOutsideIsBadUse) {
  rt::Tensor t = rt_.zeros({8, 6}, DType::kF32, {Split::kReplicate, Split::kRowWise, 2, 1}, "t");
  EXPECT_EQ(error_of<BenchError>([&] { rt_.read_slice(t, {.row = 3, .col = 0, .rows = 2, .cols = 6}); }),
            "NOT_SUPPORTED: read_slice: rows 3..4, columns 0..5 of tensor 't' (8, 6) spans several shards; a slice "
            "must lie in one shard");
  EXPECT_EQ(error_of<BenchError>(
                [&] { rt_.write_slice(t, {.row = 7, .col = 5, .rows = 1, .cols = 2}, std::vector<double>{1}); }),
            "BAD_USE: write_slice: rows 7..7, columns 5..6 of tensor 't' (8, 6): the region is empty or leaves the "
            "tensor");
  EXPECT_EQ(error_of<BenchError>([&] {
              rt_.write_slice(t, {.row = 0, .col = 0, .rows = 1, .cols = 2}, std::vector<double>{1, 2, 3});
            }),
            "BAD_USE: write_slice: rows 0..0, columns 0..1 of tensor 't' takes 2 values or one, got 3");
}

TEST_F(RuntimeTest, CopyTakesTheSourcesReadThenTheDestinationsWrite) {
  // Both 32 KiB tensors lie in sip0.cube0.pe0: the write half takes the 318.40 ns of
  // WriteTakesTheFabricTimeToItsAcknowledgement, the read half what a plain read of the source takes.
  rt::Tensor src = rt_.from_host({1, 8192}, DType::kF32, sample(8192));
  rt::Tensor dst = rt_.empty({1, 8192}, DType::kF32);
  rt::TransferResult read;
  rt_.read(src, &read);
  const Tick t0 = rt_.now();
  rt::TransferResult r = rt_.copy(dst, src);
  EXPECT_TRUE(r.completion.ok);
  EXPECT_EQ(r.bytes, 32768u);
  EXPECT_EQ(r.t_submit, t0);
  EXPECT_EQ(r.t_done - r.t_submit, (read.t_done - read.t_submit) + ns_to_ticks(318.40));
  EXPECT_EQ(rt_.now(), r.t_done);
}

TEST_F(RuntimeTest, CopyWaitsForTheLaunchesRunningOnTheSourcesSip) {
  rt::Tensor src = rt_.zeros({4, 4}, DType::kF16, {}, "src");
  rt::Tensor dst = rt_.empty({4, 4}, DType::kF16, {}, "dst");
  const Tick t0 = rt_.now();
  rt_.launch("test-noop", {src});
  EXPECT_EQ(rt_.copy(dst, src).t_submit, t0 + kSinkDelay);  // the launch's end, no later
}

TEST_F(RuntimeTest, CopyRefusesAnotherShapeOrDtypeOrAFreedTensor) {
  rt::Tensor a = rt_.empty({2, 3}, DType::kF16, {}, "a");
  rt::Tensor b = rt_.empty({3, 2}, DType::kF16, {}, "b");
  rt::Tensor c = rt_.empty({2, 3}, DType::kF32, {}, "c");
  EXPECT_EQ(error_of<BenchError>([&] { rt_.copy(a, b); }),
            "BAD_USE: copy: tensor 'b' (3, 2) f16 does not fit tensor 'a' (2, 3) f16 (shapes and dtypes must agree)");
  EXPECT_EQ(error_of<BenchError>([&] { rt_.copy(c, a); }),
            "BAD_USE: copy: tensor 'a' (2, 3) f16 does not fit tensor 'c' (2, 3) f32 (shapes and dtypes must agree)");
  rt_.free(c);
  EXPECT_EQ(error_of<BenchError>([&] { rt_.copy(a, c); }), "BAD_USE: copy: tensor 'c' was freed");
}

TEST_F(RuntimeTest, SummaryShowsThePlacementAndTheFirstAndLastValues) {
  rt::Tensor s = rt_.from_host({2, 5}, DType::kF32, sample(10), {Split::kRowWise, Split::kColumnWise, 2, 2}, "s");
  EXPECT_EQ(rt_.summary(s),
            "tensor 's' (2, 5) f32 on sip0 [cube row_wise x2, pe column_wise x2, 4 shards]: "
            "[-11, -10.75, -10.5, ..., -9.25, -9, -8.75]");
  rt::Tensor v = rt_.from_host({3}, DType::kF16, std::vector<double>{1, 2.5, -3}, {}, "v");
  EXPECT_EQ(rt_.summary(v), "tensor 'v' (3,) f16 on sip0 [cube replicate x1, pe replicate x1, 1 shard]: [1, 2.5, -3]");
  rt_.free(v);
  EXPECT_EQ(error_of<BenchError>([&] { rt_.summary(v); }), "BAD_USE: summary: tensor 'v' was freed");
}

TEST_F(RuntimeTest, TensorScopeFreesWhatWasMadeWhileItLived) {
  rt::Tensor kept = rt_.empty({1, 16}, DType::kF32, {}, "kept");  // 64 bytes, one VA page
  rt::Tensor a, b, c;
  {
    rt::TensorScope scope(rt_);
    a = rt_.zeros({1, 1000}, DType::kF32, {}, "a");
    b = rt_.from_host({2, 2}, DType::kF16, std::vector<double>{1, 2, 3, 4}, {}, "b");
    {
      rt::TensorScope inner(rt_);
      c = rt_.empty({4, 4}, DType::kF16, {}, "c");
      EXPECT_EQ(inner.tensors().size(), 1u);
    }
    EXPECT_TRUE(c.info().freed);
    rt_.free(b);  // freed by hand: the scope skips it
    EXPECT_EQ(scope.tensors().size(), 2u);
    EXPECT_FALSE(a.info().freed);
  }
  EXPECT_TRUE(a.info().freed);
  EXPECT_FALSE(kept.info().freed);
  const auto unmaps = std::count_if(sink().received.begin(), sink().received.end(),
                                    [](const auto& cmd) { return cmd->kind == HostCommand::Kind::kMmuUnmap; });
  EXPECT_EQ(unmaps, 3);  // c, b and a, once each
  // The allocators are back where the scope began: the next tensor takes a's place.
  rt::Tensor next = rt_.empty({1, 1000}, DType::kF32);
  EXPECT_EQ(next.shards()[0].pa, slice_pa(0, 0, 64));
  EXPECT_EQ(next.va(), 0x1'0000'1000u);
}

TEST_F(RuntimeTest, TensorScopeLeftByAnExceptionFreesNothing) {
  rt::Tensor t;
  try {
    rt::TensorScope scope(rt_);
    t = rt_.empty({4, 4}, DType::kF16, {}, "t");
    throw std::runtime_error("bench failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(t.info().freed);
  rt_.free(t);
}

testkit::BenchOptions bench_options(const std::string& bench) {
  return {.bench = bench, .topology = kTopology, .overrides = overrides("test.command_sink", false)};
}

TEST(RuntimeBench, UsingTheRuntimeWithoutSubmittingIsNoRequests) {
  try {
    plugins().run_bench(bench_options("test-no-work"));
    ADD_FAILURE() << "expected NO_REQUESTS";
  } catch (const BenchError& e) {
    EXPECT_EQ(e.reason(), "NO_REQUESTS");
    EXPECT_STREQ(e.what(), "NO_REQUESTS: bench 'test-no-work' used the host runtime but submitted no work");
  }
  EXPECT_EQ(plugins().run_bench(bench_options("test-one-tensor")).systems, 1u);
}

TEST(RuntimeFabric, MmuMapInstallationTakesFabricTime) {
  // The real io_cpu, M_CPU and pe_mmu: the map command crosses io_noc, UCIe
  // and the cube mesh to each cube's M_CPU and on to each PE's MMU.
  std::unique_ptr<System> sys = plugins().build(plugins().load_topology(kTopology, overrides("", true)));
  host_runtime::HostRuntime rt(*sys);
  EXPECT_EQ(rt.page_size(), 4096u);
  rt::Tensor t = rt.empty({8, 8}, DType::kF16, {Split::kReplicate, Split::kColumnWise, 2, 2});
  EXPECT_GT(rt.now(), 0u);
  auto mmu = [&](unsigned cube, unsigned pe) -> ahbm::Translator& {
    return *ahbm::as_translator(sys->component(ahbm::names::pe_part(0, cube, pe, "pe_mmu")));
  };
  // Cube 1's PE 0 reaches piece 0 in its own replica and piece 1 in its cube's PE 1.
  const auto& s = t.shards();
  EXPECT_EQ(mmu(1, 0).translate(s[0].va).pa, s[2].pa);
  EXPECT_EQ(mmu(1, 0).translate(s[1].va + 2).pa, s[3].pa + 2);
  EXPECT_EQ(rt.read_values(t), std::vector<double>(64, 0.0));
  const Tick mapped = rt.now();
  rt.free(t);
  EXPECT_GT(rt.now(), mapped);
  EXPECT_FALSE(mmu(1, 0).translate(s[0].va).mapped);
}

}  // namespace
}  // namespace kbsim
