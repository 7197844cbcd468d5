// The milestone benches as a user runs them: each writes its folder (points,
// CSV, SVG figures, index.html), the figures render to pictures with ink in
// them, a sweep gives byte-identical outputs serially, with -j 2 and under
// mpirun -np 2, and a failing point is reported while the others finish.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "kbsim/testing_cli.hpp"
#include "kbsim/testing_figure.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

namespace fs = std::filesystem;

const std::string kSmallCcl = " --param sizes=8,512 --param topologies=torus_2d --param buffer_sizes=512";

bool have(const char* tool) {
  return std::system((std::string("command -v ") + tool + " >/dev/null 2>&1").c_str()) == 0;
}

std::vector<std::string> svgs_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".svg") out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

/// Every file of a run's folder, byte for byte, except results.json's host figures.
void expect_same_outputs(const fs::path& a, const fs::path& b) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(a)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::vector<std::string> others;
  for (const auto& e : fs::directory_iterator(b)) others.push_back(e.path().filename().string());
  std::sort(others.begin(), others.end());
  EXPECT_EQ(names, others);
  for (const std::string& n : names) {
    if (n == "results.json") {
      rapidjson::Document x, y;
      x.Parse(testkit::read_file(a / n).c_str());
      y.Parse(testkit::read_file(b / n).c_str());
      for (const char* key : {"metrics", "points", "sim_time_ns", "events"})
        EXPECT_TRUE(x[key] == y[key]) << key << " differs between " << a << " and " << b;
      continue;
    }
    EXPECT_EQ(testkit::read_file(a / n), testkit::read_file(b / n)) << n << " differs between " << a << " and " << b;
  }
}

TEST(MilestoneCcl, WritesItsFolderAndGivesTheSameBytesSeriallyWithTwoJobsAndUnderMpirun) {
  const fs::path root = testkit::temp_dir();
  auto serial = testkit::run_kbsim("run --bench milestone-ccl -j 1 --out " + (root / "serial").string() + kSmallCcl);
  ASSERT_EQ(serial.code, 0) << serial.err;
  EXPECT_THAT(serial.out, HasSubstr("points     10 run, 0 failed"));
  for (const char* f : {"points.json", "summary.csv", "buffer_kinds.csv", "index.html",
                        "allreduce_latency_torus_2d_3x2.svg", "allreduce_buffer_kinds_torus_2d_3x2.svg",
                        "allreduce_vs_model_and_fsim.svg", "allreduce_center_vs_corner_root.svg", "sip_topologies.svg"})
    EXPECT_TRUE(fs::exists(root / "serial" / f)) << f;
  const std::string index = testkit::read_file(root / "serial" / "index.html");
  for (const std::string& svg : svgs_in(root / "serial")) EXPECT_THAT(index, HasSubstr("src=\"" + svg + "\""));
  // Every latency in the table is a point's measured critical path (none empty).
  const std::string csv = testkit::read_file(root / "serial" / "summary.csv");
  EXPECT_THAT(csv, HasSubstr("latency,torus_2d 3x2,ring_allreduce,-,tcm,512,1024,"));
  EXPECT_THAT(csv, Not(HasSubstr(",,")));

  auto jobs = testkit::run_kbsim("run --bench milestone-ccl -j 2 --out " + (root / "j2").string() + kSmallCcl);
  ASSERT_EQ(jobs.code, 0) << jobs.err;
  expect_same_outputs(root / "serial", root / "j2");

  if (!have("mpirun") || testkit::run_kbsim("version").out.find("with MPI") == std::string::npos)
    GTEST_SKIP() << "mpirun or an MPI build is missing: the mpirun comparison did not run";
  // As root (CI), OpenMPI wants to be told; --oversubscribe: two ranks whatever the core count.
  // Under the sanitizer build the ranks run without LeakSanitizer: OpenMPI keeps memory until exit in components it
  // has unloaded by then, which it cannot even name (kbsim's own leaks are checked by the serial run above).
  const std::string env = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=detect_leaks=0 ";
  auto mpi = testkit::run_kbsim_with(env + "mpirun -np 2 --oversubscribe",
                                     "run --bench milestone-ccl --out " + (root / "mpi").string() + kSmallCcl);
  ASSERT_EQ(mpi.code, 0) << mpi.err;
  EXPECT_THAT(mpi.out, HasSubstr("over 2 MPI ranks"));
  expect_same_outputs(root / "serial", root / "mpi");
}

TEST(MilestoneGemm, FiguresRenderToPicturesWithInk) {
  const fs::path dir = testkit::temp_dir() / "gemm";
  auto r = testkit::run_kbsim(
      "run --bench milestone-gemm --param shapes=16,64,128 --param variants=load_ref,ref_ref --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string csv = testkit::read_file(dir / "gemm_sweep.csv");
  EXPECT_THAT(csv, HasSubstr("16,16,16,load_ref,yes,1,"));    // under one tile: flagged
  EXPECT_THAT(csv, HasSubstr("32,3072,32,load_ref,no,48,"));  // the calibration shape
  const std::vector<std::string> svgs = svgs_in(dir);
  EXPECT_EQ(svgs, (std::vector<std::string>{"gemm_mac_utilization_theoretical_vs_measured.svg",
                                            "gemm_stage_breakdown.svg", "gemm_windows.svg"}));
  if (!testkit::can_render_svg())
    GTEST_SKIP() << "rsvg-convert (librsvg2-bin) is missing: the figures were not rendered";
  for (const std::string& svg : svgs) {
    const testkit::Ink ink = testkit::render_svg(dir / svg);
    ASSERT_TRUE(ink.error.empty()) << svg << ": " << ink.error;
    EXPECT_GT(ink.drawn, ink.pixels / 50) << svg << " is nearly blank";
    EXPECT_LT(ink.drawn, ink.pixels / 2) << svg << " is mostly ink";
    EXPECT_GE(ink.colours, 4u) << svg << ": axes, text and series colours expected";
  }
}

TEST(MilestoneGqa, FourPanelsDecodeWithTwoGemmsPerRank) {
  const fs::path dir = testkit::temp_dir() / "gqa";
  auto r =
      testkit::run_kbsim("run --bench milestone-gqa --param scales=validation --verify-data --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string csv = testkit::read_file(dir / "gqa_panels.csv");
  // scale, panel, ranks, s_q, s_kv, head_dim, latency, gemm, ...
  EXPECT_THAT(csv, HasSubstr("validation,single_user_decode,8,1,256,64,"));
  EXPECT_THAT(csv, testing::ContainsRegex("validation,single_user_decode,8,1,256,64,[0-9.]+,16,"));
  EXPECT_THAT(csv, testing::ContainsRegex("validation,multi_user_decode,4,1,256,64,[0-9.]+,8,"));
  EXPECT_EQ(svgs_in(dir).size(), 6u);
}

// --replot draws a sweep's figures and tables again from the folder it wrote, without simulating: the same bytes;
// a folder of another sweep (other parameters, another bench, other --set) is refused naming the difference.
TEST(Sweep, ReplotDrawsTheSameFiguresFromTheSavedPoints) {
  const fs::path root = testkit::temp_dir() / "replot", first = root / "first", again = root / "again";
  const std::string gemm = "run --bench milestone-gemm --param shapes=16,64 --param variants=load_ref,ref_ref";
  auto r = testkit::run_kbsim(gemm + " --out " + first.string());
  ASSERT_EQ(r.code, 0) << r.err;
  auto p = testkit::run_kbsim(gemm + " --replot " + first.string() + " --out " + again.string());
  ASSERT_EQ(p.code, 0) << p.err;
  expect_same_outputs(first, again);
  auto other =
      testkit::run_kbsim("run --bench milestone-gemm --param shapes=16 --param variants=load_ref,ref_ref --replot " +
                         first.string() + " --out " + (root / "x").string());
  EXPECT_EQ(other.code, 3);
  EXPECT_THAT(other.err, HasSubstr("points.json: holds 5 points, this sweep has 3 (were its parameters different?)"));
  auto set = testkit::run_kbsim(gemm + " --set system.sips.count=1 --replot " + first.string() + " --out " +
                                (root / "x").string());
  EXPECT_EQ(set.code, 3);
  EXPECT_THAT(set.err, HasSubstr("it ran with --set none, this run with system.sips.count=1"));
  auto bench =
      testkit::run_kbsim("run --bench milestone-gqa --replot " + first.string() + " --out " + (root / "x").string());
  EXPECT_EQ(bench.code, 3);
  EXPECT_THAT(bench.err, HasSubstr("a run of bench 'milestone-gemm', not of 'milestone-gqa'"));
  EXPECT_FALSE(fs::exists(root / "x"));
}

TEST(Sweep, AFailedPointIsReportedWithItsConfigurationAndTheOthersFinish) {
  const fs::path dir = testkit::temp_dir() / "fail";
  auto r = testkit::run_kbsim(
      "run --bench milestone-gemm --param shapes=16,20000000 --param variants=pinned "
      "--param calibration=false -j 2 --out " +
      dir.string());
  EXPECT_EQ(r.code, 6);
  EXPECT_THAT(r.err, HasSubstr("POINTS_FAILED: 1 of 2 points"));
  EXPECT_THAT(r.out, HasSubstr("FAILED point 2 of 2 (matmul-composite M=20000000 K=20000000 N=20000000 "
                               "variant=pinned)"));
  rapidjson::Document d;
  d.Parse(testkit::read_file(dir / "points.json").c_str());
  ASSERT_TRUE(d.IsObject());
  EXPECT_TRUE(d["points"][0]["ok"].GetBool());
  EXPECT_FALSE(d["points"][1]["ok"].GetBool());
  EXPECT_THAT(d["points"][1]["error"].GetString(), HasSubstr("M"));
  EXPECT_TRUE(fs::exists(dir / "gemm_sweep.csv"));
}

}  // namespace
}  // namespace kbsim
