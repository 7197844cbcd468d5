// The QKV benches through the command line, on the default AHBM system: each
// runs and verifies its data, the multi-PE split beats one PE on the same
// shape, the GEMM engines' busy time is the same work however it is split,
// and bad parameters are configuration errors.
//
// Model figures used below (topology.yaml, docs/model.md): pe_gemm 4096 MACs a
// cycle at 1 GHz, a stage taking ceil(m*k*n / 4096) ns; tiles 32/64/32 (a full
// tile's GEMM 16 ns); 8 PEs per cube.
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

// 32x64x32 on one PE: one tile, 65536 MACs = 16 ns of GEMM; load X, load W, dot, store Y run one after another.
TEST(QkvBench, SinglePeRunsOneGemmAndVerifies) {
  BenchRun r = run("--bench qkv-gemm --verify-data");
  ASSERT_EQ(r.cli.code, 0) << r.cli.err;
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.metrics()["pes"].GetInt64(), 1);
  EXPECT_EQ(r.stage("gemm"), 16.0);
  EXPECT_EQ(r.metric("compute_ns"), 16.0);
  EXPECT_EQ(r.metric("kernel_window_ns"), r.metric("dma_ns") + r.metric("compute_ns"));
  EXPECT_EQ(r.metric("kernel_window_ns"), 75.0);  // measured on the default system
  EXPECT_EQ(r.metric("flops"), 2.0 * 32 * 64 * 32);
  EXPECT_DOUBLE_EQ(r.metric("gemm_utilisation"), 16.0 / r.metric("kernel_window_ns"));
  EXPECT_THAT(r.cli.out, HasSubstr("32x64x32 on 1 PE(s): kernel window"));
  EXPECT_THAT(r.cli.out, HasSubstr("verified Y (32, 32)"));
}

// Split over the 8 PEs of cube 0: 4 columns each, 8192 MACs = 2 ns of GEMM a PE; the same 16 ns in all.
TEST(QkvBench, MultiPeSplitsTheColumnsAndVerifies) {
  BenchRun r = run("--bench qkv-gemm-multi-pe --verify-data");
  ASSERT_EQ(r.cli.code, 0) << r.cli.err;
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.metrics()["pes"].GetInt64(), 8);
  EXPECT_EQ(r.stage("gemm"), 8 * 2.0);
  EXPECT_EQ(r.metric("compute_ns"), 2.0);  // the slowest PE's
  EXPECT_EQ(r.metric("kernel_window_ns"), 43.0);
  EXPECT_THAT(r.cli.out, HasSubstr("32x64x32 on 8 PE(s)"));
  EXPECT_THAT(r.cli.out, HasSubstr("verified Y"));
  for (const char* pe : {"sip0.cube0.pe0.pe_dma", "sip0.cube0.pe7.pe_dma"}) {
    EXPECT_EQ(r.stat(pe, "reads"), 2u) << pe;  // its X replica and its W slice
    EXPECT_EQ(r.stat(pe, "writes"), 1u) << pe;
  }
}

// The split must win at the reference's reduced shape and at its
// original 128x256x128 (1024 ns of GEMM on one PE, 128 on each of 8).
TEST(QkvBench, MultiPeIsFasterThanSinglePeForTheSameShape) {
  for (const std::string shape : {"", " --param M=128 --param K=256 --param N=128"}) {
    BenchRun one = run("--bench qkv-gemm" + shape), many = run("--bench qkv-gemm-multi-pe" + shape);
    ASSERT_EQ(one.cli.code, 0) << one.cli.err;
    ASSERT_EQ(many.cli.code, 0) << many.cli.err;
    EXPECT_LT(many.metric("kernel_window_ns"), one.metric("kernel_window_ns")) << shape;
    EXPECT_EQ(many.stage("gemm"), one.stage("gemm")) << shape;  // the same work, spread
    EXPECT_GT(many.metric("gemm_tflops_in_kernel_window"), one.metric("gemm_tflops_in_kernel_window")) << shape;
  }
  BenchRun big = run("--bench qkv-gemm --param M=128 --param K=256 --param N=128");
  ASSERT_EQ(big.cli.code, 0) << big.cli.err;
  EXPECT_EQ(big.stage("gemm"), 1024.0);
}

// One PE reproduces the single-PE bench exactly: the same kernel, a grid of one.
TEST(QkvBench, MultiPeOnOnePeEqualsSinglePe) {
  BenchRun one = run("--bench qkv-gemm"), split = run("--bench qkv-gemm-multi-pe --param pes=1");
  ASSERT_EQ(one.cli.code, 0) << one.cli.err;
  ASSERT_EQ(split.cli.code, 0) << split.cli.err;
  EXPECT_EQ(split.metric("kernel_window_ns"), one.metric("kernel_window_ns"));
  EXPECT_EQ(split.metric("dma_ns"), one.metric("dma_ns"));
}

// 32 tokens x 12288 onto two heads' Q, K and V (768 columns), 96 per PE: 1 x 192 x 3 = 576 tiles a PE, each 16 ns
// of GEMM; X loaded up front (one read), W streamed per tile, one write-back per output tile.
TEST(QkvBench, Gpt3SliceRunsComposites) {
  BenchRun r = run("--bench gpt3-qkv --verify-data");
  ASSERT_EQ(r.cli.code, 0) << r.cli.err;
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.metrics()["K"].GetInt64(), 12288);
  EXPECT_EQ(r.metrics()["N"].GetInt64(), 768);
  EXPECT_EQ(r.stage("gemm"), 8 * 576 * 16.0);
  for (const char* pe : {"sip0.cube0.pe0", "sip0.cube0.pe7"}) {
    const std::string dma = std::string(pe) + ".pe_dma", sched = std::string(pe) + ".pe_scheduler";
    EXPECT_EQ(r.stat(sched.c_str(), "tiles"), 576u + 1) << pe;
    EXPECT_EQ(r.stat(dma.c_str(), "reads"), 576u + 1) << pe;
    EXPECT_EQ(r.stat(dma.c_str(), "writes"), 3u) << pe;
  }
  EXPECT_GT(r.metric("composite_window_ns"), 576 * 16.0);  // W's tile reads bound it, not the GEMM
  EXPECT_LT(r.metric("composite_window_ns"), r.metric("kernel_window_ns"));
  EXPECT_EQ(r.metric("kernel_window_ns"), 14086.0);
  EXPECT_GT(r.metric("gemm_utilisation"), 0.0);
  EXPECT_LT(r.metric("gemm_utilisation"), 1.0);
  EXPECT_THAT(r.cli.out, HasSubstr("verified Y (32, 768)"));
}

TEST(QkvBench, BadParametersAreConfigErrors) {
  BenchRun too_many = run("--bench qkv-gemm-multi-pe --param pes=9");
  EXPECT_EQ(too_many.cli.code, 3);
  EXPECT_THAT(too_many.cli.err, HasSubstr("pes"));
  BenchRun heads = run("--bench gpt3-qkv --param heads=97");
  EXPECT_EQ(heads.cli.code, 3);
  EXPECT_THAT(heads.cli.err, HasSubstr("heads"));
}

TEST(QkvBench, SameInputsGiveTheSameResults) {
  BenchRun a = run("--bench qkv-gemm-multi-pe"), b = run("--bench qkv-gemm-multi-pe");
  ASSERT_TRUE(a.ok && b.ok);
  for (const char* key : {"kernel_window_ns", "dma_ns", "compute_ns", "launch_ns"})
    EXPECT_EQ(a.metric(key), b.metric(key)) << key;
  EXPECT_EQ(a.doc["events"].GetUint64(), b.doc["events"].GetUint64());
}

}  // namespace
}  // namespace kbsim
