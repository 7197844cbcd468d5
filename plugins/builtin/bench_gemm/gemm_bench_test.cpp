// The GEMM benches through the command line, on the default AHBM system: plan
// and engine counts, exact simulated windows, operand staging, swapping the
// PE's GEMM engine without rebuilding, bad use, and determinism.
//
// Model figures used below (topology.yaml, docs/model.md): tiles 32/64/32;
// pe_gemm 4096 MACs/cycle at 1 GHz (a 32x64x32 tile in 16 ns); FETCH of a tile's
// A and B (4 KiB each) at the TCM's 512 GB/s = 16 ns; STORE of a 32x32 f16 tile
// = 4 ns; custom.systolic_gemm 32x32: ceil(64/32) * ceil(32/32) folds x
// (32 + 32 + 32 - 1) cycles = 190 ns a tile.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <string>

#include "bench_run.hpp"
#include "kbsim/testing_cli.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

using bench_gemm::BenchRun;
using bench_gemm::run;

constexpr const char* kPe0Dma = "sip0.cube0.pe0.pe_dma";
constexpr const char* kPe0Sched = "sip0.cube0.pe0.pe_scheduler";
const std::string k512 = "--bench matmul-composite --param M=512 --param K=512 --param N=512";

TEST(GemmBench, SinglePeReportsStageTimes) {
  BenchRun r = run("--bench gemm-single-pe");
  ASSERT_EQ(r.cli.code, 0) << r.cli.err;
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.stage("gemm"), 64.0);  // 64^3 MACs / 4096 per ns
  EXPECT_EQ(r.stage("fetch"), 0.0);  // a simple GEMM command reads the register file only
  EXPECT_EQ(r.metric("compute_ns"), 64.0);
  EXPECT_EQ(r.metric("dma_ns"), r.stage("dma_read") + r.stage("dma_write"));
  EXPECT_EQ(r.metric("kernel_window_ns"), r.metric("dma_ns") + r.metric("compute_ns"));  // load, load, dot, store
  EXPECT_EQ(r.metrics()["commands"].GetUint64(), 4u);
  EXPECT_THAT(r.cli.out, HasSubstr("64x64x64: kernel window"));
}

TEST(GemmBench, Composite512CubedRunsAs2048TilesWithOneWriteBackPerOutputTile) {
  BenchRun r = run(k512);
  ASSERT_EQ(r.cli.code, 0) << r.cli.err;
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.stat(kPe0Sched, "tiles"), 2048u + 1);  // the composite's tiles + the up-front load of A
  EXPECT_EQ(r.stat(kPe0Sched, "composite_commands"), 1u);
  EXPECT_EQ(r.stat(kPe0Dma, "writes"), 16u * 16);  // only the last K tile writes back
  EXPECT_EQ(r.stat(kPe0Dma, "reads"), 2048u + 1);  // B per tile + A once
  EXPECT_EQ(r.stage("gemm"), 2048 * 16.0);
  EXPECT_EQ(r.stage("fetch"), 2048 * 16.0);
  EXPECT_EQ(r.stage("store"), 256 * 4.0);
  EXPECT_EQ(r.metric("composite_window_ns"), 40244.0);
  EXPECT_EQ(r.metric("kernel_window_ns"), 42295.0);
}

TEST(GemmBench, PinnedOperandsRemoveTheirReads) {
  BenchRun pinned = run(k512 + " --param variant=pinned");
  BenchRun streamed = run(k512 + " --param variant=ref_ref");
  ASSERT_EQ(pinned.cli.code, 0) << pinned.cli.err;
  ASSERT_EQ(streamed.cli.code, 0) << streamed.cli.err;
  EXPECT_EQ(pinned.stat(kPe0Dma, "reads"), 2u);  // A and B loaded once
  EXPECT_EQ(streamed.stat(kPe0Dma, "reads"), 2u * 2048);
  EXPECT_EQ(pinned.stat(kPe0Dma, "writes"), 256u);
  EXPECT_EQ(streamed.stat(kPe0Dma, "writes"), 256u);
  EXPECT_LT(pinned.metric("composite_window_ns"), streamed.metric("composite_window_ns"));
  EXPECT_EQ(streamed.metric("composite_window_ns"), streamed.metric("kernel_window_ns"));  // nothing up front
}

TEST(GemmBench, SwappingTheGemmEngineChangesOnlyTheComputeTime) {
  BenchRun builtin = run(k512);
  BenchRun systolic = run(k512 + " --set cube.pe_template.components.pe_gemm.impl=custom.systolic_gemm");
  ASSERT_EQ(systolic.cli.code, 0) << systolic.cli.err;
  EXPECT_EQ(builtin.stage("gemm"), 2048 * 16.0);
  EXPECT_EQ(systolic.stage("gemm"), 2048 * 190.0);
  EXPECT_EQ(systolic.doc["implementations"]["custom.systolic_gemm"]["library"].GetString(),
            std::string("kbsim_systolic_gemm"));
  EXPECT_EQ(systolic.stat(kPe0Dma, "reads"), builtin.stat(kPe0Dma, "reads"));  // same data movement
  EXPECT_EQ(systolic.stat(kPe0Dma, "bytes"), builtin.stat(kPe0Dma, "bytes"));
  BenchRun bigger = run(k512 + " --set cube.pe_template.components.pe_gemm.impl=custom.systolic_gemm" +
                        " --set cube.pe_template.components.pe_gemm.attrs.rows=64");
  ASSERT_EQ(bigger.cli.code, 0) << bigger.cli.err;
  EXPECT_EQ(bigger.stage("gemm"), 2048 * (32 + 64 + 32 - 1.0));  // one fold of K per tile
}

// FIGURES.md: 32x3072x32 load_ref, composite window 992 ns, kernel window 1765 ns.
// kbsim: 48 B tiles read at 19 ns each (the 16 ns drain at 256 GB/s, the router's
// 2 ns and one flit on the link into the PE; the request crosses the router on the
// request channel), 57 ns for the last tile's FETCH, GEMM, STORE and write-back:
// 969 ns (-2.3%); A's 192 KiB load up front adds 771 ns: 1740 (-1.4%). Each of the
// two calibrated settings moves the figures back when it is undone.
TEST(GemmBench, CalibrationCaseWindows) {
  BenchRun r = run("--bench matmul-composite");
  ASSERT_EQ(r.cli.code, 0) << r.cli.err;
  EXPECT_EQ(r.metrics()["K"].GetInt64(), 3072);
  EXPECT_EQ(r.stat(kPe0Sched, "tiles"), 48u + 1);
  EXPECT_EQ(r.stat(kPe0Dma, "writes"), 1u);
  EXPECT_EQ(r.metric("composite_window_ns"), 48 * 19 + 57.0);
  EXPECT_EQ(r.metric("kernel_window_ns"), 1740.0);
  // Requests paying the router's 2 ns like data: 21 ns a tile.
  BenchRun round_trip =
      run("--bench matmul-composite --set cube.pe_template.components.pe_dma.attrs.stage_read_request_channel=false");
  ASSERT_EQ(round_trip.cli.code, 0) << round_trip.cli.err;
  EXPECT_EQ(round_trip.metric("composite_window_ns"), 48 * 21 + 57.0);
  EXPECT_EQ(round_trip.metric("kernel_window_ns"), 1838.0);
  // HBM derated to 0.8: the 192 KiB of A take 960 ns instead of 768.
  BenchRun derated = run("--bench matmul-composite --set cube.components.hbm_ctrl.attrs.efficiency=0.8");
  ASSERT_EQ(derated.cli.code, 0) << derated.cli.err;
  EXPECT_EQ(derated.metric("composite_window_ns"), 1067.0);
  EXPECT_EQ(derated.metric("kernel_window_ns"), 2028.0);
}

// More tiles take longer, at the rates above. One tile (32x64x32): B's 4 KiB
// read (19 ns) and the 57 ns of FETCH, GEMM, STORE and write-back: composite
// 76 ns, plus A's 4 KiB load up front (16 ns drain + 3): kernel 95 ns. Two
// tiles along K (32x128x32): 2 x 19 + 57 = 95 ns, plus A's 8 KiB (32 + 3):
// 130 ns. Four output tiles (64x64x64), each written back: 146 ns, plus A's
// 8 KiB: 181 ns.
TEST(GemmBench, AMultiTileCompositeTakesLongerThanASingleTile) {
  struct Case {
    const char* shape;
    std::uint64_t tiles;  // the composite's, without the up-front load of A
    double composite_ns, kernel_ns;
  };
  const Case cases[] = {{"--param M=32 --param K=64 --param N=32", 1, 76.0, 95.0},
                        {"--param M=32 --param K=128 --param N=32", 2, 95.0, 130.0},
                        {"--param M=64 --param K=64 --param N=64", 4, 146.0, 181.0}};
  double previous = 0;
  for (const Case& c : cases) {
    BenchRun r = run(std::string("--bench matmul-composite ") + c.shape);
    ASSERT_EQ(r.cli.code, 0) << r.cli.err;
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.stat(kPe0Sched, "tiles"), c.tiles + 1) << c.shape;
    EXPECT_EQ(r.metric("composite_window_ns"), c.composite_ns) << c.shape;
    EXPECT_EQ(r.metric("kernel_window_ns"), c.kernel_ns) << c.shape;
    EXPECT_GT(r.metric("composite_window_ns"), previous) << c.shape;
    previous = r.metric("composite_window_ns");
  }
}

TEST(GemmBench, ExhaustedAllocatorIsAOneLineErrorNamingThePeAndTime) {
  BenchRun r = run("--bench matmul-composite --param M=65536 --param K=65536");
  EXPECT_EQ(r.cli.code, 5);
  EXPECT_FALSE(r.ok);  // nothing written
  EXPECT_EQ(r.cli.err,
            "kbsim: error: allocator: sip0.cube0.pe0 HBM slice exhausted: need 8589934592 bytes, largest free block "
            "6442450944 (at t=0 ns)\n");
}

TEST(GemmBench, BadParametersAreConfigErrors) {
  BenchRun r = run("--bench matmul-composite --param variant=loaded");
  EXPECT_EQ(r.cli.code, 3);
  EXPECT_THAT(r.cli.err, HasSubstr("variant"));
  EXPECT_THAT(r.cli.err, HasSubstr("load_ref, pinned or ref_ref"));
}

TEST(GemmBench, SameInputsGiveTheSameResults) {
  BenchRun a = run(k512), b = run(k512);
  ASSERT_TRUE(a.ok && b.ok);
  for (const char* key : {"kernel_window_ns", "composite_window_ns", "dma_ns", "compute_ns"})
    EXPECT_EQ(a.metric(key), b.metric(key)) << key;
  EXPECT_EQ(a.doc["events"].GetUint64(), b.doc["events"].GetUint64());
}

}  // namespace
}  // namespace kbsim
