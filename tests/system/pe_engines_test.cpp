// The PE engines on the default system (docs/model.md, "The PE"): pe_scheduler,
// pe_dma's tile stages, pe_fetch_store + pe_tcm, pe_gemm, pe_math and
// custom.systolic_gemm. An in-process driver stands in for pe_cpu (it sends
// pe::Commands to the scheduler and collects the answers) and an in-process
// translator for pe_mmu, so these tests depend on neither plugin.
//
// Numbers of the default PE template used below: pe_gemm 4096 MACs a cycle at
// 1 GHz (32x64x32 = 16 ns); pe_math 64 lanes at 1 GHz, at least 2 ns
// (32x32 = 16 ns, 8x8 = 2 ns); pe_tcm 512 GB/s per channel (8 KiB = 16 ns,
// 2 KiB = 4 ns); PE-internal links carry tokens in 0 ns. The DMA's fabric
// times on PE0's own HBM slice (docs of pe_dma_perf_test.cpp): a write of
// N 256 B flits takes 13 + N ns (2 KiB: 21 ns); a tile stage's read of 4 KiB
// takes 0 (its request crosses the router on the request channel) + 16 x 1
// (the 16 flits on the 256 GB/s controller link, each streamed as its PC
// starts the burst) + 2 (the router, on the first flit) + 1 (last flit to the
// PE at 256 GB/s) = 19 ns.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "harness.hpp"
#include "kbsim/ahbm/host_command.hpp"
#include "kbsim/ahbm/memory_map.hpp"
#include "kbsim/pe/command.hpp"

namespace kbsim {
namespace {

using pe::Command;
using pe::CommandKind;
using pe::StageType;

constexpr Tick ns(double n) { return static_cast<Tick>(n * kPsPerNs); }

/// Stands in for pe_cpu: sends commands to its PE's scheduler, keeps the answers.
class Driver final : public Component {
 public:
  explicit Driver(const ComponentContext& ctx) : Component(ctx) { all[std::string(id())] = this; }
  ~Driver() override { all.erase(std::string(id())); }  // one system at a time
  static ComponentInfo info() {
    ComponentInfo i;
    i.type = "test_pe_driver";
    i.summary = "test stand-in for pe_cpu";
    i.ports = {{"*", "any"}};
    return i;
  }

  /// Send `cmd` to the scheduler at time `at`.
  void submit(Ref<Command> cmd, Tick at = 0) {
    cmd->reply_to = index();
    schedule(at - now(), 0, std::move(cmd));
  }
  void on_timer(std::uint64_t, Ref<Message> msg) override {
    send(out_port_to(find_node(pe::sibling(id(), "pe_scheduler"))), std::move(msg));
  }
  void on_message(PortIndex, Ref<Message> msg) override { done.push_back({Ref<Command>(&msg->as<Command>()), now()}); }

  struct Done {
    Ref<Command> cmd;
    Tick at;
  };
  std::vector<Done> done;
  static inline std::map<std::string, Driver*> all;
};

/// Stands in for pe_mmu: one mapping [va, va + size) -> [pa, pa + size).
class Mmu final : public Component, public ahbm::Translator {
 public:
  explicit Mmu(const ComponentContext& ctx)
      : Component(ctx),
        va_(static_cast<std::uint64_t>(params().get_int("va"))),
        pa_(static_cast<std::uint64_t>(params().get_int("pa"))),
        size_(static_cast<std::uint64_t>(params().get_int("size"))),
        overhead_(ns_to_ticks(params().get_float("tlb_overhead_ns"))) {}
  static ComponentInfo info() {
    ComponentInfo i;
    i.type = "test_mmu";
    i.summary = "test stand-in for pe_mmu";
    i.params = {param_int("va", 0, ""), param_int("pa", 0, ""), param_int("size", 0, ""),
                param_float("tlb_overhead_ns", 0.0, "")};
    i.ports = {{"*", "any"}};
    return i;
  }
  Result translate(std::uint64_t va) const override {
    if (va < va_ || va >= va_ + size_) return {};
    return {true, pa_ + (va - va_), va_ + size_ - va};
  }
  Tick overhead() const override { return overhead_; }
  std::uint64_t page_size() const override { return 4096; }

 private:
  std::uint64_t va_, pa_, size_;
  Tick overhead_;
};

/// Stands in for pe_fetch_store: records which tile each first stage belongs
/// to, in arrival order (= feed order), and finishes every stage after 10 ns.
class Recorder final : public pe::StageEngine {
 public:
  explicit Recorder(const ComponentContext& ctx) : StageEngine(ctx) { instances[std::string(id())] = this; }
  ~Recorder() override { instances.erase(std::string(id())); }
  static ComponentInfo info() {
    ComponentInfo i;
    i.type = "test_stage_recorder";
    i.summary = "test stage engine recording the feed order";
    i.ports = {{"*", "any"}};
    return i;
  }
  void on_timer(std::uint64_t, Ref<Message> msg) override {
    finish_stage(Ref<pe::TileToken>(&msg->as<pe::TileToken>()), now() - ns(10));
  }
  std::vector<std::pair<std::uint64_t, std::uint32_t>> fed;  ///< (command id, tile)
  static inline std::map<std::string, Recorder*> instances;

 private:
  void accept(Ref<pe::TileToken> t, bool) override {
    if (t->stage == 0) fed.emplace_back(t->pipe->command->id, t->tile);
    schedule(ns(10), 0, std::move(t));
  }
};

const core::Registry& registry() {
  static const std::unique_ptr<core::Registry> reg = [] {
    auto r = test::builtin_registry();
    r->add_component_type({Driver::info(), [](const ComponentContext& c) -> Component* { return new Driver(c); }});
    r->add_component_type({Mmu::info(), [](const ComponentContext& c) -> Component* { return new Mmu(c); }});
    r->add_component_type({Recorder::info(), [](const ComponentContext& c) -> Component* { return new Recorder(c); }});
    r->map_impl("test.pe_driver", "(in-process)", "test_pe_driver", "test");
    r->map_impl("test.mmu", "(in-process)", "test_mmu", "test");
    r->map_impl("test.recorder", "(in-process)", "test_stage_recorder", "test");
    return r;
  }();
  return *reg;
}

class PeEngine : public ::testing::Test {
 protected:
  static constexpr const char* kPe = "sip0.cube0.pe0";

  /// Elaborate the default topology with the driver and test MMU in every PE, plus `overrides`.
  void build(std::vector<std::string> overrides = {}) {
    sim_.reset();
    overrides.insert(overrides.begin(), {"cube.pe_template.components.pe_cpu={impl: test.pe_driver}",
                                         "cube.pe_template.components.pe_mmu={impl: test.mmu}"});
    graph_ = core::load_topology(KBSIM_SOURCE_DIR "/topology.yaml", overrides, registry());  // knows test.pe_driver
    sim_ = core::simulated(graph_, registry());
    map_ = ahbm::MemoryMap::from(sim_->attrs());
    driver_ = Driver::all.at(std::string(kPe) + ".pe_cpu");
  }
  /// Run to the end; the answers in completion order.
  const std::vector<Driver::Done>& run() {
    sim_->run();
    sim_->finish();
    return driver_->done;
  }
  std::uint64_t hbm(unsigned pe, std::uint64_t offset) { return ahbm::pe_hbm_addr(0, 0, pe, offset, map_.slice_bytes); }
  double stat(const char* part, const char* name) {
    const Stat& s = sim_->stat(std::string(kPe) + "." + part, name);
    return s.count ? static_cast<double>(s.count) : s.value;
  }

  static Ref<Command> simple(std::uint64_t id, pe::Stage stage) {
    Ref<Command> c = make_message<Command>();
    c->id = id;
    c->stage = stage;
    switch (stage.type) {
      case StageType::kDmaRead: c->kind = CommandKind::kDmaRead; break;
      case StageType::kDmaWrite: c->kind = CommandKind::kDmaWrite; break;
      case StageType::kMath: c->kind = CommandKind::kMath; break;
      default: c->kind = CommandKind::kGemm;
    }
    return c;
  }
  static Ref<Command> gemm(std::uint64_t id, std::uint32_t m, std::uint32_t k, std::uint32_t n) {
    return simple(id, {StageType::kGemm, 0, 0, m, k, n});
  }
  static Ref<Command> math(std::uint64_t id, std::uint32_t m, std::uint32_t n) {
    return simple(id, {StageType::kMath, 0, 0, m, 0, n});
  }
  /// A composite GEMM with the scheduler's default tiles, its operands in PE0's HBM slice.
  Ref<Command> composite(std::uint64_t id, std::uint64_t m, std::uint64_t k, std::uint64_t n, bool a_pinned,
                         bool b_pinned) {
    Ref<Command> c = make_message<Command>();
    c->id = id;
    c->kind = CommandKind::kCompositeGemm;
    c->gemm.m = m;
    c->gemm.k = k;
    c->gemm.n = n;
    c->gemm.tile_m = c->gemm.tile_k = c->gemm.tile_n = 0;
    c->gemm.a_addr = hbm(0, 0);
    c->gemm.b_addr = hbm(0, 1 << 20);
    c->gemm.out_addr = hbm(0, 2 << 20);
    c->gemm.a_pinned = a_pinned;
    c->gemm.b_pinned = b_pinned;
    return c;
  }

  Graph graph_;
  std::unique_ptr<core::SimulatedSystem> sim_;
  ahbm::MemoryMap map_;
  Driver* driver_ = nullptr;
};

TEST_F(PeEngine, AGemmCommandHoldsTheMacArrayForMacsOverMacsPerCycle) {
  build();
  driver_->submit(gemm(1, 32, 64, 32));
  const auto& done = run();
  ASSERT_EQ(done.size(), 1u);
  const Command& c = *done[0].cmd;
  EXPECT_TRUE(c.done);
  EXPECT_TRUE(c.ok) << c.error;
  EXPECT_EQ(c.tiles, 1u);
  EXPECT_EQ(done[0].at, ns(16));  // 65536 MACs / 4096 a cycle at 1 GHz
  EXPECT_EQ(c.t_submit, 0u);
  EXPECT_EQ(c.t_first, 0u);
  EXPECT_EQ(c.t_last, ns(16));
  EXPECT_EQ(c.busy[static_cast<std::size_t>(StageType::kGemm)], ns(16));
  EXPECT_EQ(stat("pe_gemm", "ops"), 1.0);
  EXPECT_EQ(stat("pe_gemm", "macs"), 65536.0);
  EXPECT_EQ(stat("pe_gemm", "busy_ns"), 16.0);
  EXPECT_EQ(stat("pe_scheduler", "commands"), 1.0);
  EXPECT_EQ(stat("pe_scheduler", "tiles"), 1.0);
}

TEST_F(PeEngine, TheDispatchOverheadIsPaidPerCommandInTurn) {
  build({"cube.pe_template.components.pe_scheduler.attrs.overhead_ns=5.0",
         "cube.pe_template.components.pe_math.attrs.shared_resource=math_slot"});
  // The GEMM is fed at 5 and computes 5..21; the MATH (on its own slot) is
  // dispatched after the GEMM's feed, 5..10, and computes 10..26.
  driver_->submit(gemm(1, 32, 64, 32));
  driver_->submit(math(2, 32, 32));
  const auto& done = run();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].cmd->t_first, ns(5));
  EXPECT_EQ(done[0].at, ns(21));
  EXPECT_EQ(done[1].cmd->t_submit, 0u);
  EXPECT_EQ(done[1].cmd->t_first, ns(10));
  EXPECT_EQ(done[1].at, ns(26));
}

TEST_F(PeEngine, AMathCommandTakesElementsOverLanesButAtLeastItsOverhead) {
  build();
  driver_->submit(math(1, 32, 32));         // 1024 / 64 = 16 cycles
  driver_->submit(math(2, 8, 8), ns(100));  // 1 cycle < the 2 ns overhead
  const auto& done = run();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].at, ns(16));
  EXPECT_EQ(done[1].at, ns(102));
  EXPECT_EQ(done[1].cmd->busy[static_cast<std::size_t>(StageType::kMath)], ns(2));
  EXPECT_EQ(stat("pe_math", "elements"), 1024.0 + 64.0);
}

TEST_F(PeEngine, GemmAndMathShareOneComputeSlot) {
  build();
  driver_->submit(gemm(1, 32, 64, 32));
  driver_->submit(math(2, 32, 32));
  const auto& done = run();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].cmd->id, 1u);
  EXPECT_EQ(done[0].at, ns(16));
  EXPECT_EQ(done[1].cmd->t_first, ns(16)) << "MATH waits for the GEMM's slot";
  EXPECT_EQ(done[1].at, ns(32));
  // On separate slots they overlap.
  build({"cube.pe_template.components.pe_math.attrs.shared_resource=math_slot"});
  driver_->submit(gemm(1, 32, 64, 32));
  driver_->submit(math(2, 32, 32));
  const auto& apart = run();
  ASSERT_EQ(apart.size(), 2u);
  EXPECT_EQ(apart[0].at, ns(16));
  EXPECT_EQ(apart[1].at, ns(16));
}

TEST_F(PeEngine, SimpleDmaCommandsTranslateQueueAndReportTheirAddress) {
  const std::uint64_t va = 0x40000000;
  build({"cube.pe_template.components.pe_mmu.attrs={va: " + std::to_string(va) + ", pa: " +
         std::to_string(ahbm::pe_hbm_addr(0, 0, 0, 0x10000, 6ull << 30)) + ", size: 65536, tlb_overhead_ns: 3.0}"});
  driver_->submit(simple(1, {StageType::kDmaRead, hbm(0, 0), 4096}));  // not mapped: a physical address
  driver_->submit(simple(2, {StageType::kDmaRead, va + 0x100, 4096}), ns(100));
  driver_->submit(simple(3, {StageType::kDmaWrite, va, 2048}), ns(200));
  driver_->submit(simple(4, {StageType::kDmaRead, hbm(0, 0) | (1ull << 40), 4096}), ns(300));  // MBZ bit set
  driver_->submit(simple(5, {StageType::kDmaRead, va + 65536 - 1024, 4096}), ns(400));         // runs off the mapping
  const auto& done = run();
  ASSERT_EQ(done.size(), 5u);
  EXPECT_EQ(done[0].at, ns(3 + 19)) << "a TLB miss costs the lookup too";
  EXPECT_EQ(done[0].cmd->pa, hbm(0, 0));
  EXPECT_EQ(done[1].at, ns(100 + 3 + 19)) << "the TLB overhead, then the transfer";
  EXPECT_EQ(done[1].cmd->pa, hbm(0, 0x10100));
  EXPECT_EQ(done[1].cmd->busy[static_cast<std::size_t>(StageType::kDmaRead)], ns(3 + 19));
  EXPECT_EQ(done[2].at, ns(200 + 3 + 21));
  EXPECT_EQ(done[2].cmd->pa, hbm(0, 0x10000));
  EXPECT_FALSE(done[3].cmd->ok);
  EXPECT_NE(done[3].cmd->error.find("read of 4096 bytes at 0x"), std::string::npos) << done[3].cmd->error;
  EXPECT_EQ(done[3].at, ns(300)) << "refused before it reaches a channel";
  EXPECT_FALSE(done[4].cmd->ok);
  EXPECT_NE(done[4].cmd->error.find("not mapped to contiguous physical memory"), std::string::npos)
      << done[4].cmd->error;
  EXPECT_EQ(stat("pe_dma", "stages"), 3.0);
  EXPECT_EQ(stat("pe_dma", "errors"), 2.0);
}

TEST_F(PeEngine, ACompositeWithPinnedOperandsFetchesComputesStoresAndWritesBack) {
  build();
  // One 32x64x32 tile: FETCH 8 KiB (16 ns) -> GEMM (16) -> STORE 2 KiB (4) -> DMA_WRITE 2 KiB (21).
  driver_->submit(composite(1, 32, 64, 32, true, true));
  const auto& done = run();
  ASSERT_EQ(done.size(), 1u);
  const Command& c = *done[0].cmd;
  EXPECT_TRUE(c.ok) << c.error;
  EXPECT_EQ(c.tiles, 1u);
  auto busy = [&](StageType t) { return c.busy[static_cast<std::size_t>(t)]; };
  EXPECT_EQ(busy(StageType::kFetch), ns(16));
  EXPECT_EQ(busy(StageType::kGemm), ns(16));
  EXPECT_EQ(busy(StageType::kStore), ns(4));
  EXPECT_EQ(busy(StageType::kDmaWrite), ns(21));
  EXPECT_EQ(busy(StageType::kDmaRead), 0u);
  EXPECT_EQ(c.t_first, 0u);
  EXPECT_EQ(c.t_last, ns(57));
  EXPECT_EQ(done[0].at, ns(57));
  EXPECT_EQ(stat("pe_fetch_store", "fetch_bytes"), 8192.0);
  EXPECT_EQ(stat("pe_fetch_store", "store_bytes"), 2048.0);
  EXPECT_EQ(stat("pe_tcm", "read_busy_ns"), 16.0);
  EXPECT_EQ(stat("pe_scheduler", "composite_commands"), 1.0);
}

TEST_F(PeEngine, OneTileBufferRunsTheTilesOneAfterAnother) {
  build({"cube.pe_template.components.pe_scheduler.attrs.max_inflight_tiles=1"});
  // 64x128x64 with both operands pinned: 2 x 2 output tiles of 2 K steps. The
  // first K step is FETCH + GEMM (32 ns), the second adds STORE + DMA_WRITE (57 ns).
  driver_->submit(composite(1, 64, 128, 64, true, true));
  const auto& done = run();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].cmd->tiles, 8u);
  EXPECT_EQ(done[0].at, ns(4 * (32 + 57)));
}

TEST_F(PeEngine, ACompositeGemmWithPinnedAIsPacedByItsBReads) {
  build();
  // 64x128x64, A pinned: tiles (m, n, k) = 000 001 010 011 100 101 110 111,
  // each DMA_READ(B) 4 KiB (19) -> FETCH 8 KiB (16) -> GEMM (16), the k = 1
  // tiles also STORE (4) -> DMA_WRITE 2 KiB (21). The read channel is the
  // bottleneck and never idles. The write-backs of tiles 1, 3 and 5 overlap
  // reads and share r0c0's worker (a first flit holds it 2 ns) and the
  // controller's pseudo-channels (a burst holds its PC 8 ns) with them, which
  // stretches the read stream from 8 x 19 = 152 to 162 ns; tile 7 then
  // fetches, computes, stores and writes back: 162 + 16 + 16 + 4 + 21 = 219 ns.
  driver_->submit(composite(1, 64, 128, 64, true, false));
  const auto& done = run();
  ASSERT_EQ(done.size(), 1u);
  const Command& c = *done[0].cmd;
  EXPECT_TRUE(c.ok) << c.error;
  EXPECT_EQ(c.tiles, 8u);
  EXPECT_EQ(c.t_first, 0u);
  EXPECT_EQ(c.t_last, ns(219));
  EXPECT_EQ(done[0].at, ns(219));
  auto busy = [&](StageType t) { return c.busy[static_cast<std::size_t>(t)]; };
  EXPECT_EQ(busy(StageType::kDmaRead), ns(162));
  EXPECT_EQ(busy(StageType::kFetch), ns(8 * 16));
  EXPECT_EQ(busy(StageType::kGemm), ns(8 * 16));
  EXPECT_EQ(busy(StageType::kStore), ns(4 * 4));
  EXPECT_EQ(busy(StageType::kDmaWrite), ns(103));  // the first three slowed by the reads, the last 21
  EXPECT_EQ(stat("pe_dma", "reads"), 8.0);
  EXPECT_EQ(stat("pe_dma", "writes"), 4.0);
}

TEST_F(PeEngine, AChainedDmaReadGoesBeforeOtherTilesReads) {
  build();
  // 64x64x32, nothing pinned: two tiles, both fed at 0, each reading A then B.
  // Tile 0's B read is chained to its A read, so it overtakes tile 1's queued
  // A read: A0 0..19, B0 19..38, A1 38..57, B1 57..76. Tile 0 fetches
  // 38..54; tile 1 runs its last four stages after 76.
  driver_->submit(composite(1, 64, 64, 32, false, false));
  sim_->run_until(ns(55));
  EXPECT_EQ(stat("pe_dma", "reads"), 2.0);
  EXPECT_EQ(stat("pe_fetch_store", "fetches"), 1.0) << "tile 0 has both operands first";
  const auto& done = run();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].at, ns(76 + 16 + 16 + 4 + 21));
}

TEST_F(PeEngine, TheFeedsOfTwoCommandsNeverInterleave) {
  build({"cube.pe_template.components.pe_fetch_store={impl: test.recorder}"});
  driver_->submit(composite(1, 64, 128, 64, true, true));  // 8 tiles, first stage FETCH
  driver_->submit(composite(2, 64, 128, 64, true, true), ns(1));
  const auto& done = run();
  ASSERT_EQ(done.size(), 2u);
  const auto& fed = Recorder::instances.at(std::string(kPe) + ".pe_fetch_store")->fed;
  ASSERT_EQ(fed.size(), 16u);
  for (std::uint32_t i = 0; i < 16; ++i) EXPECT_EQ(fed[i], std::make_pair<std::uint64_t>(i < 8 ? 1 : 2, i % 8)) << i;
  EXPECT_LT(done[1].cmd->t_first, done[0].cmd->t_last) << "the commands themselves overlap downstream";
}

TEST_F(PeEngine, ASystolicArrayReplacesTheGemmEngine) {
  build({"cube.pe_template.components.pe_gemm={impl: custom.systolic_gemm}"});
  // 32x32 array, 32x64x32: ceil(64/32) * ceil(32/32) = 2 folds of 32 + 32 + 32 - 1 = 95 cycles.
  driver_->submit(gemm(1, 32, 64, 32));
  driver_->submit(math(2, 32, 32));  // still shares the slot
  const auto& done = run();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].at, ns(190));
  EXPECT_EQ(done[1].at, ns(190 + 16));
  // 16x64 array: 4 x 1 folds of 32 + 16 + 64 - 1 = 111 cycles, at 2 GHz.
  build(
      {"cube.pe_template.components.pe_gemm={impl: custom.systolic_gemm, attrs: {rows: 16, cols: 64, "
       "clock_ghz: 2.0}}"});
  driver_->submit(gemm(1, 32, 64, 32));
  const auto& fast = run();
  ASSERT_EQ(fast.size(), 1u);
  EXPECT_EQ(fast[0].at, ns(444 / 2.0));
}

}  // namespace
}  // namespace kbsim
