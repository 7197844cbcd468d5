// Topology independence: the reference's verification plan asks that its
// checks pass on the smallest systems of each kind: one SIP, one cube and one
// PE; one cube of N PEs; one SIP of M cubes; K SIPs. Each shape here is the
// default system changed by --set alone, and runs a bench that places tensors,
// launches kernels through the host runtime and checks every value with
// --verify-data. What a shape holds is read back from the compiled topology
// (topology.json), not assumed; a run that crosses cubes or SIPs must take
// time doing so.
//
// The smallest cube the AHBM front-end builds has two PEs (NW and NE, one
// each): the PEs' positions give the cube's router columns, and the HBM zone
// in the middle needs four. The one-PE shape is therefore one SIP with one
// such cube, its GEMM on PE 0 alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

namespace fs = std::filesystem;

/// A system of `sips` SIPs, each a `cube_w` x `cube_h` mesh of cubes of 2 PEs (`small_cubes`) or the default 8.
struct SystemShape {
  unsigned sips, cube_w, cube_h;
  bool small_cubes;
  /// The --set options that give this shape.
  std::string overrides() const {
    std::string s = " --set system.sips.count=" + std::to_string(sips) +
                    " --set sip.cube_mesh.w=" + std::to_string(cube_w) +
                    " --set sip.cube_mesh.h=" + std::to_string(cube_h);
    if (cube_w == 1)  // the default's second IO port faces cube (1, 0)
      s += " --set 'sip.io_chiplets.0.cube_ports=[{cube: {xy: [0, 0]}, cube_side: N, phy: P0, distance_mm: 2.0}]'";
    if (small_cubes)
      s += " --set cube.pe_layout.corners=[NW,NE] --set cube.pe_layout.pe_per_corner=1"
           " --set cube.memory_map.hbm_slices_per_cube=2 --set cube.memory_map.hbm_pseudo_channels=16";
    return s;
  }
};

/// A verified run: what kbsim printed, its results and the topology it compiled.
struct VerifiedRun {
  test::CliResult cli;
  rapidjson::Document results, topology;
};

VerifiedRun run(const std::string& bench_args, const SystemShape& shape) {
  static int n = 0;
  const fs::path out = test::temp_dir() / ("run" + std::to_string(++n));
  VerifiedRun r;
  r.cli = test::run_kbsim("run " + bench_args + shape.overrides() + " --verify-data --out " + out.string());
  if (r.cli.code != 0) return r;
  r.results.Parse(test::read_file(out / "results.json").c_str());
  r.topology.Parse(test::read_file(out / "topology.json").c_str());
  EXPECT_FALSE(r.results.HasParseError() || r.topology.HasParseError());
  return r;
}

/// The PE_CPUs the compiled system has.
std::size_t pes_built(const rapidjson::Document& topology) {
  std::size_t n = 0;
  for (const auto& node : topology["nodes"].GetArray())
    n += std::string_view(node["impl"].GetString()) == "builtin.pe_cpu";
  return n;
}

/// The PE_CPUs that ran at least one kernel (results.json lists the components that did something).
std::size_t pes_launched(const rapidjson::Document& results) {
  std::size_t n = 0;
  for (const auto& c : results["components"].GetObject())
    n += std::string_view(c.name.GetString()).ends_with(".pe_cpu") && c.value["launches"].GetUint64() > 0;
  return n;
}

double metric(const VerifiedRun& r, const char* key) { return r.results["metrics"][key].GetDouble(); }

constexpr const char* kTpVerified = "verified: every rank's 512 outputs within";

TEST(TopologyShapes, OneSipOneCubeOnePe) {
  const VerifiedRun r = run("--bench matmul-composite", {1, 1, 1, true});
  ASSERT_EQ(r.cli.code, 0) << r.cli.err;
  EXPECT_THAT(r.cli.out, HasSubstr("verified C (32, 32) f16 against Eigen: all 1024 elements"));
  EXPECT_EQ(pes_built(r.topology), 2u);  // the smallest cube
  EXPECT_EQ(pes_launched(r.results), 1u);
}

// tp-mlp spreads each layer over every PE of every cube of every SIP. On one
// cube of one SIP its all_reduce has nothing to move (ring_allreduce: see the
// next test for the default algorithm).
TEST(TopologyShapes, OneCubeOfNPes) {
  const VerifiedRun r = run("--bench tp-mlp --set ccl.algorithm=ring_allreduce", {1, 1, 1, false});
  ASSERT_EQ(r.cli.code, 0) << r.cli.err;
  EXPECT_THAT(r.cli.out, HasSubstr(kTpVerified));
  EXPECT_EQ(pes_built(r.topology), 8u);
  EXPECT_EQ(pes_launched(r.results), pes_built(r.topology));
  EXPECT_EQ(metric(r, "allreduce_crit_ns"), 0.0);
}

// On a lone cube the lrab kernel loads the row-parallel partial sums and
// stores them back unchanged: the store must carry what the data pass
// computed there, not the bytes the timing pass loaded before it (a bug this
// test found: tl.store now reads a loaded tensor as of its load, as tl.send).
TEST(TopologyShapes, OneCubeOfNPesWithTheDefaultAllreduce) {
  const VerifiedRun r = run("--bench tp-mlp", {1, 1, 1, false});
  ASSERT_EQ(r.cli.code, 0) << r.cli.err;
  EXPECT_THAT(r.cli.out, HasSubstr(kTpVerified));
}

TEST(TopologyShapes, OneSipOfMCubes) {
  const VerifiedRun r = run("--bench tp-mlp", {1, 2, 1, true});
  ASSERT_EQ(r.cli.code, 0) << r.cli.err;
  EXPECT_THAT(r.cli.out, HasSubstr(kTpVerified));
  EXPECT_EQ(pes_built(r.topology), 4u);
  EXPECT_EQ(pes_launched(r.results), pes_built(r.topology));
  EXPECT_GT(metric(r, "allreduce_crit_ns"), 0.0);  // the cubes' partial sums cross UCIe
}

TEST(TopologyShapes, KSipsOfOneCube) {
  const VerifiedRun r = run("--bench tp-mlp", {2, 1, 1, true});
  ASSERT_EQ(r.cli.code, 0) << r.cli.err;
  EXPECT_THAT(r.cli.out, HasSubstr(kTpVerified));
  EXPECT_EQ(r.results["metrics"]["world_size"].GetUint64(), 2u);
  EXPECT_EQ(pes_built(r.topology), 4u);
  EXPECT_EQ(pes_launched(r.results), pes_built(r.topology));
  EXPECT_GT(metric(r, "allreduce_crit_ns"), 0.0);  // the SIPs' sums cross PCIe
}

}  // namespace
}  // namespace kbsim
