// Kernel launches (docs/model.md, "Host commands and the launch barrier") on
// the default system: IO_CPU's start barrier, the M_CPU fan-out, PE_CPU running
// kernels on fibers, and kernel errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <stdexcept>

#include "kbsim/ahbm/host_command.hpp"
#include "kbsim/ahbm/memory_map.hpp"
#include "kbsim/ahbm/names.hpp"
#include "kbsim/ahbm/phys_addr.hpp"
#include "kbsim/pe/kernels.hpp"
#include "kbsim/pe/memory_store.hpp"
#include "kbsim/testing.hpp"

namespace kbsim {
namespace {

using ahbm::HostCommand;
using ahbm::PeRef;
using ::testing::HasSubstr;

// --- test kernels (what they saw goes into `seen`) ---

std::vector<double> seen;

void k_cycles(tl::Program& tl, const tl::Args&) { tl.cycles(100); }
void k_cycles_by_pe(tl::Program& tl, const tl::Args&) {
  tl.cycles(100 * static_cast<std::uint64_t>(1 + tl.program_id(0)));
}
/// tl.outside: run on another stack (the event loop's), no time passing; what it throws comes back here.
void k_outside(tl::Program& tl, const tl::Args&) {
  tl.cycles(40);
  int mine = 0;
  std::ptrdiff_t apart = 0;
  tl.outside([&] {
    int there = 0;
    apart = reinterpret_cast<char*>(&there) - reinterpret_cast<char*>(&mine);
  });
  if (std::abs(apart) < (1 << 16)) throw std::runtime_error("outside ran on the kernel's own stack");
  try {
    tl.outside([] { throw std::invalid_argument("thrown outside"); });
    throw std::runtime_error("what outside threw did not come back");
  } catch (const std::invalid_argument&) {
  }
  tl.cycles(60);
}
void k_throw(tl::Program& tl, const tl::Args&) {
  tl.cycles(7);
  throw std::runtime_error("boom 42");
}
void k_bad_axis(tl::Program& tl, const tl::Args&) { tl.program_id(2); }
void k_identity(tl::Program& tl, const tl::Args&) {
  seen.insert(seen.end(), {double(tl.program_id(0)), double(tl.program_id(1)), double(tl.num_programs(0)),
                           double(tl.num_programs(1))});
}
void k_constants(tl::Program& tl, const tl::Args&) {
  auto f = tl.full({2, 2}, 1.5, DType::kF32);
  auto r = tl.arange(3, 6);
  seen.insert(seen.end(), {f.at(1, 1), r.item(0), r.item(2), double(f.addr() % 16), double(r.addr() - f.addr())});
  tl.trans(tl.ref(0x1000, {2, 3})).bytes();  // a ref has no data: throws
}
void k_load(tl::Program& tl, const tl::Args& args) {
  auto x = tl.load(static_cast<std::uint64_t>(args.i64(0)), {2, 2}, DType::kF32);
  for (int i = 0; i < 4; ++i) seen.push_back(x.item(i));
}
void k_branch(tl::Program& tl, const tl::Args& args) {
  if (tl.load(static_cast<std::uint64_t>(args.i64(0)), {1}, DType::kF32).item(0) > 0.5) tl.cycles(1000);
}
void k_store_load(tl::Program& tl, const tl::Args& args) {
  auto ptr = static_cast<std::uint64_t>(args.i64(0));
  tl.store(ptr, tl.arange(10, 14, DType::kF32));
  auto back = tl.load(ptr, {4}, DType::kF32);  // the store is visible at issue
  for (int i = 0; i < 4; ++i) seen.push_back(back.item(i));
}

void k_bad_dot(tl::Program& tl, const tl::Args&) { tl.dot(tl.zeros({2, 3}), tl.zeros({2, 3})); }
void k_compute(tl::Program& tl, const tl::Args& args) {
  auto a = tl.load(static_cast<std::uint64_t>(args.i64(0)), {4, 8});
  auto b = tl.load(static_cast<std::uint64_t>(args.i64(0)), {8, 2});
  auto c = tl.dot(a, b);
  auto s = tl.sum(c, 1);
  auto m = tl.full({1}, 2.0) * a;  // a single element broadcasts
  for (const tl::Tensor& t : {c, s, m}) seen.insert(seen.end(), {double(t.shape()[0]), double(t.shape()[1])});
  try {
    c.item(0);
  } catch (const tl::Error& e) {
    seen.push_back(std::string(e.what()).find("timing pass") != std::string::npos);
  }
}
void k_composite(tl::Program& tl, const tl::Args& args) {
  auto ptr = static_cast<std::uint64_t>(args.i64(0));
  tl::CompositeSpec spec;
  spec.a = tl.load(ptr, {64, 64});
  spec.b = tl.ref(ptr + 0x10000, {64, 64});
  spec.out_ptr = ptr + 0x20000;
  tl.composite(spec);  // not waited for: the kernel's end waits
  seen.push_back(1);   // reached before the composite is done
}

/// kbsim's own plugins and this file's kernels, loaded once.
const testkit::Plugins& plugins() {
  static const std::unique_ptr<testkit::Plugins> loaded = [] {
    auto p = std::make_unique<testkit::Plugins>();
    PluginDescriptor kernels_here{};
    const std::pair<const char*, tl::KernelFn> kernels[] = {
        {"t-cycles", &k_cycles},       {"t-cycles-by-pe", &k_cycles_by_pe},
        {"t-throw", &k_throw},         {"t-outside", &k_outside},
        {"t-bad-axis", &k_bad_axis},   {"t-identity", &k_identity},
        {"t-constants", &k_constants}, {"t-load", &k_load},
        {"t-branch", &k_branch},       {"t-store-load", &k_store_load},
        {"t-bad-dot", &k_bad_dot},     {"t-compute", &k_compute},
        {"t-composite", &k_composite},
    };
    for (const auto& [name, fn] : kernels) add_kernel(kernels_here, name, fn, "launch_test kernel");
    p->add(std::move(kernels_here), "launch_test");
    return p;
  }();
  return *loaded;
}

struct Client final : HostCommand::Client {
  std::vector<Ref<HostCommand>> done;
  void on_complete(HostCommand& c) override { done.emplace_back(&c); }
};

class Launch : public ::testing::Test {
 protected:
  void SetUp() override {
    seen.clear();
    build({});
  }
  void build(const std::vector<std::string>& overrides) {
    sim_ = plugins().build(plugins().load_topology(KBSIM_SOURCE_DIR "/topology.yaml", overrides));
  }
  Ref<HostCommand> command(const std::string& kernel, std::vector<PeRef> targets, tl::Args args = {}) {
    auto cmd = make_message<HostCommand>();
    cmd->kind = HostCommand::Kind::kLaunch;
    cmd->kernel = kernel;
    cmd->targets = std::move(targets);
    cmd->args = std::make_shared<const tl::Args>(std::move(args));
    return cmd;
  }
  /// Submit a launch to IO_CPU (or another command target).
  Ref<HostCommand> launch(const std::string& kernel, std::vector<PeRef> targets, tl::Args args = {},
                          const std::string& at = "sip0.io0.io_cpu") {
    auto cmd = command(kernel, std::move(targets), std::move(args));
    ahbm::as_command_target(sim_->component(at))->submit(cmd, &client_);
    return cmd;
  }
  /// The message of the SimError running the simulation throws.
  std::string sim_error() {
    try {
      sim_->run();
    } catch (const SimError& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected a SimError";
    return "";
  }
  /// A 0-byte message's time along a route: link latencies and the transit costs in between.
  double latency(const std::string& from, const std::string& to) {
    auto info = sim_->route_info(from, to, "memory");
    double t = 0;
    for (std::size_t k = 0; k + 1 < info.hops.size(); ++k) t += info.hops[k].link_latency_ns;
    for (std::size_t k = 1; k + 1 < info.hops.size(); ++k) t += info.hops[k].transit_ns;
    return t;
  }
  static double ns(Tick t) { return ticks_to_ns(t); }

  std::unique_ptr<System> sim_;
  Client client_;
};

TEST_F(Launch, EveryPeStartsAtTheStampedBarrierWhateverItsDistance) {
  std::vector<PeRef> targets = {{0, 0, 0}, {0, 0, 7}, {0, 15, 0}, {0, 15, 3}};
  auto cmd = launch("t-cycles-by-pe", targets);
  cmd->grid_pes = 8;
  sim_->run();
  ASSERT_EQ(client_.done.size(), 1u);
  ASSERT_TRUE(cmd->completion.ok) << cmd->completion.error_message;
  ASSERT_TRUE(cmd->has_start);
  // IO_CPU's overhead, then the slowest two-leg path: through cube 15's M_CPU (paying its 5 ns once).
  double slowest = 0;
  for (const PeRef& pe : targets) {
    std::string m_cpu = ahbm::names::m_cpu(pe.sip, pe.cube);
    slowest = std::max(slowest, latency("sip0.io0.io_cpu", m_cpu) + 5 +
                                    latency(m_cpu, ahbm::names::pe_part(pe.sip, pe.cube, pe.pe, "pe_cpu")));
  }
  EXPECT_DOUBLE_EQ(ns(cmd->target_start), 10 + slowest);
  ASSERT_EQ(cmd->results.size(), 4u);
  for (const auto& r : cmd->results) {
    EXPECT_EQ(r.start, cmd->target_start) << "cube " << r.pe.cube << " pe " << r.pe.pe;  // zero spread
    EXPECT_DOUBLE_EQ(r.pe_exec_ns, 100.0 * (1 + r.pe.pe));
    EXPECT_EQ(r.end - r.start, ns_to_ticks(r.pe_exec_ns));
    EXPECT_EQ(r.commands, 0u);
  }
  EXPECT_DOUBLE_EQ(cmd->pe_exec_ns, 800.0);  // the maximum over the PEs
  EXPECT_GT(cmd->t_done, cmd->target_start + ns_to_ticks(800));
  EXPECT_EQ(sim_->stat("sip0.io0.io_cpu", "responses").count, 2u);  // one per cube
  EXPECT_EQ(sim_->stat("sip0.cube15.m_cpu", "answers").count, 2u);
  EXPECT_EQ(sim_->stat("sip0.cube15.pe3.pe_cpu", "launches").count, 1u);
  EXPECT_DOUBLE_EQ(sim_->stat("sip0.cube15.pe3.pe_cpu", "kernel_ns").value, 400.0);
}

TEST_F(Launch, AFullCubeAndItsNeighbourStartTogether) {
  std::vector<PeRef> targets;
  for (unsigned cube : {0u, 1u})
    for (unsigned pe = 0; pe < 8; ++pe) targets.push_back({0, cube, pe});
  auto cmd = launch("t-cycles", targets);
  sim_->run();
  ASSERT_TRUE(cmd->completion.ok) << cmd->completion.error_message;
  ASSERT_EQ(cmd->results.size(), 16u);
  for (const auto& r : cmd->results) EXPECT_EQ(r.start, cmd->target_start);
}

TEST_F(Launch, CyclesTakeExactlyTheirTimeAtTheClock) {
  auto cmd = launch("t-cycles", {{0, 2, 1}});
  sim_->run();
  ASSERT_EQ(cmd->results.size(), 1u);
  EXPECT_DOUBLE_EQ(cmd->pe_exec_ns, 100.0);
  EXPECT_DOUBLE_EQ(cmd->results[0].pe_exec_ns, 100.0);
  EXPECT_EQ(cmd->results[0].pe, (PeRef{0, 2, 1}));
  EXPECT_EQ(cmd->results[0].composite_first, kNever);  // no composite ran
  build({"cube.pe_template.components.pe_cpu.attrs.clock_ghz=2.0"});
  auto fast = launch("t-cycles", {{0, 2, 1}});
  sim_->run();
  EXPECT_DOUBLE_EQ(fast->pe_exec_ns, 50.0);
}

TEST_F(Launch, OutsideRunsOnTheEventLoopsStackInNoTimeAndRethrowsInTheKernel) {
  auto cmd = launch("t-outside", {{0, 2, 1}});
  sim_->run();
  ASSERT_TRUE(cmd->completion.ok) << cmd->completion.error_message;
  EXPECT_DOUBLE_EQ(cmd->pe_exec_ns, 100.0);  // the cycles only
}

TEST_F(Launch, ProgramIdsAreThePeAndTheCubeAndTheGridComesWithTheLaunch) {
  auto cmd = launch("t-identity", {{0, 9, 6}});
  cmd->grid_pes = 8;
  cmd->grid_cubes = 16;
  sim_->run();
  EXPECT_THAT(seen, ::testing::ElementsAre(6, 9, 8, 16));
}

TEST_F(Launch, ConstantsLiveInAlignedScratchAndARefHasNoData) {
  launch("t-constants", {{0, 0, 0}});
  std::string e = sim_error();
  EXPECT_THAT(seen, ::testing::ElementsAre(1.5, 3, 5, 0, 16));
  EXPECT_THAT(e, HasSubstr("kernel 't-constants' threw: tensor (3, 2) has no data"));
}

TEST_F(Launch, AKernelThatThrowsIsASimErrorNamingThePeTheTimeAndTheException) {
  auto cmd = launch("t-throw", {{0, 3, 2}});
  std::string e = sim_error();
  EXPECT_THAT(e, HasSubstr("sip0.cube3.pe2.pe_cpu: kernel 't-throw' threw: boom 42"));
  // Thrown 7 ns into the kernel, which started at the barrier.
  EXPECT_THAT(e, ::testing::StartsWith("t=" + std::to_string(static_cast<int>(ns(cmd->target_start) + 7))));
  EXPECT_EQ(std::count(e.begin(), e.end(), '\n'), 0);
}

TEST_F(Launch, MisusingTheKernelApiNamesTheCall) {
  launch("t-bad-axis", {{0, 0, 4}});
  EXPECT_THAT(sim_error(), HasSubstr("sip0.cube0.pe4.pe_cpu: kernel 't-bad-axis' threw: tl.program_id(2)"));
  SetUp();
  launch("t-bad-dot", {{0, 0, 4}});
  EXPECT_THAT(sim_error(), HasSubstr("threw: tl.dot((2, 3), (2, 3)): the shapes do not multiply"));
}

TEST_F(Launch, AnUnknownKernelIsASimErrorNamingThePe) {
  launch("no-such-kernel", {{0, 0, 1}});
  std::string e = sim_error();
  EXPECT_THAT(e, HasSubstr("sip0.cube0.pe1.pe_cpu: unknown kernel 'no-such-kernel'"));
  EXPECT_THAT(e, ::testing::StartsWith("t="));
}

TEST_F(Launch, AtTheMcpuALaunchGetsABarrierOverItsOwnPes) {
  auto cmd = launch("t-cycles", {{0, 4, 0}, {0, 4, 6}}, {}, "sip0.cube4.m_cpu");
  sim_->run();
  ASSERT_TRUE(cmd->has_start);
  double slowest = std::max(latency("sip0.cube4.m_cpu", "sip0.cube4.pe0.pe_cpu"),
                            latency("sip0.cube4.m_cpu", "sip0.cube4.pe6.pe_cpu"));
  EXPECT_DOUBLE_EQ(ns(cmd->target_start), 5 + slowest);
  ASSERT_EQ(cmd->results.size(), 2u);
  for (const auto& r : cmd->results) EXPECT_EQ(r.start, cmd->target_start);
  EXPECT_EQ(client_.done.size(), 1u);
}

TEST_F(Launch, AStampedStartThatHasPassedIsAMissedBarrier) {
  auto cmd = command("t-cycles", {{0, 4, 0}});
  cmd->has_start = true;
  cmd->target_start = ns_to_ticks(1);  // passed on to the PE unchanged
  ahbm::as_command_target(sim_->component("sip0.cube4.m_cpu"))->submit(cmd, &client_);
  EXPECT_THAT(sim_error(),
              HasSubstr("sip0.cube4.pe0.pe_cpu: kernel 't-cycles': the launch missed its start barrier by"));
}

TEST_F(Launch, ALaunchOnABusyPeWaitsForTheKernelBeforeIt) {
  auto first = launch("t-cycles", {{0, 0, 0}});
  auto second = launch("t-cycles", {{0, 0, 0}});
  sim_->run();
  ASSERT_EQ(client_.done.size(), 2u);
  EXPECT_EQ(first->target_start, second->target_start);
  EXPECT_EQ(second->results[0].start, first->results[0].end);
  EXPECT_DOUBLE_EQ(second->pe_exec_ns, 100.0);
}

// --- kernels that use the PE engines (pe_scheduler, pe_dma, ...) ---

TEST_F(Launch, LoadReturnsTheBytesInMemory) {
  const std::uint64_t pa = ahbm::pe_hbm_addr(0, 0, 1, 0x4000, ahbm::MemoryMap::from(sim_->attrs()).slice_bytes);
  const float values[] = {1.5f, -2.0f, 3.25f, 8.0f};
  sim_->service<MemoryStore>().write(pa, std::as_bytes(std::span(values)));
  auto cmd = launch("t-load", {{0, 0, 1}}, tl::Args({static_cast<std::int64_t>(pa)}));  // no mapping: VA = PA
  sim_->run();
  ASSERT_TRUE(cmd->completion.ok);
  EXPECT_THAT(seen, ::testing::ElementsAre(1.5, -2.0, 3.25, 8.0));
  EXPECT_EQ(cmd->results[0].commands, 1u);
  EXPECT_GT(cmd->results[0].dma_ns, 0.0);
}

TEST_F(Launch, AKernelBranchesOnALoadedValue) {
  const std::uint64_t pa = ahbm::pe_hbm_addr(0, 0, 0, 0, ahbm::MemoryMap::from(sim_->attrs()).slice_bytes);
  auto run_with = [&](float flag) {
    SetUp();
    sim_->service<MemoryStore>().write(pa, std::as_bytes(std::span(&flag, 1)));
    auto cmd = launch("t-branch", {{0, 0, 0}}, tl::Args({static_cast<std::int64_t>(pa)}));
    sim_->run();
    return cmd->pe_exec_ns;
  };
  EXPECT_DOUBLE_EQ(run_with(1.0f) - run_with(0.0f), 1000.0);
}

TEST_F(Launch, EachIssuedCommandPaysTheDispatchCost) {
  const std::uint64_t pa = ahbm::pe_hbm_addr(0, 0, 1, 0, ahbm::MemoryMap::from(sim_->attrs()).slice_bytes);
  auto plain = launch("t-load", {{0, 0, 1}}, tl::Args({static_cast<std::int64_t>(pa)}));
  sim_->run();
  build({"cube.pe_template.components.pe_cpu.attrs.dispatch_ns=7.5"});
  auto slow = launch("t-load", {{0, 0, 1}}, tl::Args({static_cast<std::int64_t>(pa)}));
  sim_->run();
  EXPECT_DOUBLE_EQ(slow->pe_exec_ns - plain->pe_exec_ns, 7.5);
}

TEST_F(Launch, AFailedCommandFailsTheKernelNamingTheCall) {
  launch("t-load", {{0, 0, 1}}, tl::Args({std::int64_t{1} << 40}));  // a must-be-zero address bit
  std::string e = sim_error();
  EXPECT_THAT(e, HasSubstr("sip0.cube0.pe1.pe_cpu: kernel 't-load': tl.load(0x10000000000, (2, 2), f32): "));
  EXPECT_EQ(std::count(e.begin(), e.end(), '\n'), 0);
}

TEST_F(Launch, ComputeResultsHaveTheirShapesButNoValues) {
  const std::uint64_t pa = ahbm::pe_hbm_addr(0, 0, 3, 0, ahbm::MemoryMap::from(sim_->attrs()).slice_bytes);
  auto cmd = launch("t-compute", {{0, 0, 3}}, tl::Args({static_cast<std::int64_t>(pa)}));
  sim_->run();
  ASSERT_TRUE(cmd->completion.ok);
  EXPECT_THAT(seen, ::testing::ElementsAre(4, 2, 4, 1, 4, 8, 1));
  const auto& r = cmd->results[0];
  EXPECT_EQ(r.commands, 5u);  // 2 loads, dot, sum, mul
  EXPECT_GT(r.compute_ns, 0.0);
  EXPECT_DOUBLE_EQ(r.compute_ns, r.stage_busy_ns[2] + r.stage_busy_ns[3]);
  EXPECT_DOUBLE_EQ(r.dma_ns, r.stage_busy_ns[0] + r.stage_busy_ns[5]);
}

TEST_F(Launch, AKernelEndsWhenItsCompositesDo) {
  const std::uint64_t pa = ahbm::pe_hbm_addr(0, 0, 0, 0, ahbm::MemoryMap::from(sim_->attrs()).slice_bytes);
  auto cmd = launch("t-composite", {{0, 0, 0}}, tl::Args({static_cast<std::int64_t>(pa)}));
  sim_->run();
  ASSERT_TRUE(cmd->completion.ok);
  EXPECT_THAT(seen, ::testing::ElementsAre(1));
  const auto& r = cmd->results[0];
  EXPECT_EQ(r.commands, 2u);
  EXPECT_GE(r.composite_first, r.start);
  EXPECT_LE(r.composite_last, r.end);
  EXPECT_GT(r.composite_last, r.composite_first);
  EXPECT_GT(r.stage_busy_ns[2], 0.0);  // gemm
  EXPECT_GT(r.stage_busy_ns[5], 0.0);  // dma_write of the output tiles
}

TEST_F(Launch, AStoreIsVisibleAtIssueThroughTheMmu) {
  const std::uint64_t va = 0x200000,
                      pa = ahbm::pe_hbm_addr(0, 0, 2, 0x8000, ahbm::MemoryMap::from(sim_->attrs()).slice_bytes);
  auto map = make_message<HostCommand>();
  map->kind = HostCommand::Kind::kMmuMap;
  map->targets = {{0, 0, 2}};
  map->entries =
      std::make_shared<const std::vector<ahbm::MmuEntry>>(std::vector<ahbm::MmuEntry>{{{0, 0, 2}, va, pa, 4096}});
  ahbm::as_command_target(sim_->component("sip0.io0.io_cpu"))->submit(map, &client_);
  sim_->run();
  auto cmd = launch("t-store-load", {{0, 0, 2}}, tl::Args({static_cast<std::int64_t>(va)}));
  sim_->run();
  ASSERT_TRUE(cmd->completion.ok);
  EXPECT_THAT(seen, ::testing::ElementsAre(10, 11, 12, 13));
  float at_pa[4];
  sim_->service<MemoryStore>().read(pa, std::as_writable_bytes(std::span(at_pa)));
  EXPECT_THAT(at_pa, ::testing::ElementsAre(10, 11, 12, 13));
}

}  // namespace
}  // namespace kbsim
