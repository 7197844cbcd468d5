// One simulation split over the ranks of `mpirun` (docs/scale-out.md): the
// same results for any number of ranks, and errors that end every rank with one
// line. Skipped in a build without MPI or on a machine without mpirun.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

namespace fs = std::filesystem;

bool have_mpi() {
#if defined(__SANITIZE_ADDRESS__)
  return false;  // OpenMPI's own allocations, kept to its exit, read as leaks to the sanitizer
#else
  static const bool yes = std::system("command -v mpirun >/dev/null 2>&1") == 0 &&
                          test::run_kbsim("version").out.find("with MPI") != std::string::npos;
  return yes;
#endif
}

/// mpirun as root (CI runs as root), quiet (its own notes on a failed rank off), more ranks than cores allowed.
std::string mpirun(unsigned ranks) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -q --oversubscribe -np " +
         std::to_string(ranks);
}

/// results.json without the host's figures (wall time, events per second, the host block with the split).
std::string results_without_host(const fs::path& file) {
  rapidjson::Document d;
  d.Parse(test::read_file(file).c_str());
  EXPECT_FALSE(d.HasParseError()) << file;
  if (d.HasParseError()) return {};
  for (const char* key : {"wall_time_s", "events_per_s", "host"}) d.RemoveMember(key);
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  d.Accept(w);
  return out.GetString();
}

TEST(Mpi, AMeshOverOneToFourRanksWritesTheResultsOfOneProcess) {
  if (!have_mpi()) GTEST_SKIP() << "no mpirun, or kbsim built without MPI";
  const fs::path dir = test::temp_dir();
  const std::string bench = "run --bench message-mesh --param x=6 --param y=6 --param stop_ns=300 --out ";
  auto serial = test::run_kbsim(bench + (dir / "serial").string());
  ASSERT_EQ(serial.code, 0) << serial.err;
  const std::string want = results_without_host(dir / "serial" / "results.json");
  for (unsigned ranks : {1u, 2u, 3u, 4u}) {
    const fs::path out = dir / ("np" + std::to_string(ranks));
    auto r = test::run_kbsim_with(mpirun(ranks), bench + out.string());
    ASSERT_EQ(r.code, 0) << ranks << " ranks: " << r.err;
    EXPECT_EQ(results_without_host(out / "results.json"), want) << ranks << " ranks";
    EXPECT_EQ(test::read_file(out / "topology.json"), test::read_file(dir / "serial" / "topology.json"));
    if (ranks > 1) {
      EXPECT_THAT(r.out, HasSubstr("split      " + std::to_string(ranks) + " ranks: ")) << r.out;
      EXPECT_THAT(r.out, HasSubstr("lookahead 1 ns, 301 windows")) << r.out;
      const std::string results = test::read_file(out / "results.json");
      EXPECT_THAT(results, HasSubstr("\"ranks\": " + std::to_string(ranks)));
      EXPECT_THAT(results, HasSubstr("\"lookahead_ns\": 1"));
    }
  }
  // Every rank running the whole system (--partition none) gives them too; rank 0 writes.
  auto whole = test::run_kbsim_with(mpirun(2), bench + (dir / "none").string() + " --partition none");
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_EQ(results_without_host(dir / "none" / "results.json"), want);
  EXPECT_THAT(whole.out, ::testing::Not(HasSubstr("split")));
}

/// Two test.thrower nodes, not linked: `bomb` (node 1, so rank 1's) throws from its timer at 5 ns.
fs::path two_throwers(const std::string& bomb_stage) {
  const fs::path dir = test::temp_dir();
  test::write_file(dir / "c.yaml", "components:\n  test.thrower: { library: test_thrower, type: thrower }\n");
  test::write_file(dir / "t.yaml",
                   "nodes:\n  - { id: calm, impl: test.thrower, params: { stage: never } }\n"
                   "  - { id: bomb, impl: test.thrower, params: { stage: " +
                       bomb_stage + " } }\n");
  return dir;
}

std::string thrower_run(const fs::path& dir) {
  return "run --bench traffic --plugins " + (fs::path(KBSIM_TEST_PLUGIN_DIR) / "thrower").string() + " --components " +
         (dir / "c.yaml").string() + " --topology " + (dir / "t.yaml").string() + " --out " + (dir / "out").string();
}

TEST(Mpi, AnErrorOnOneRankEndsEveryRankWithOneLineNamingTheRank) {
  if (!have_mpi()) GTEST_SKIP() << "no mpirun, or kbsim built without MPI";
  for (const auto& [stage, code, words] :
       {std::tuple<std::string, int, std::string>{"timer", 5, "t=5 ns: bomb: component fault"},
        {"setup", 4, "t=0 ns: bomb (test.thrower, library test_thrower): setup failed"},
        {"finish", 4, "t=5 ns: bomb (test.thrower, library test_thrower): finish failed"}}) {
    const fs::path dir = two_throwers(stage);
    auto r = test::run_kbsim_with(mpirun(2), thrower_run(dir));
    EXPECT_EQ(r.code, code) << stage << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("kbsim: error: rank 1 of 2: " + words)) << stage;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
    EXPECT_FALSE(fs::exists(dir / "out" / "results.json")) << "nothing half-written";
  }
}

TEST(Mpi, MoreRanksThanTheSystemHasPartsIsOneConfigError) {
  if (!have_mpi()) GTEST_SKIP() << "no mpirun, or kbsim built without MPI";
  const fs::path dir = two_throwers("never");
  auto r = test::run_kbsim_with(mpirun(3), thrower_run(dir));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("kbsim: error: the system cannot be split over 3 ranks"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
}

TEST(Mpi, AnAhbmSystemIsRefusedBeforeItRunsUntilFlitsCanCross) {
  if (!have_mpi()) GTEST_SKIP() << "no mpirun, or kbsim built without MPI";
  const fs::path dir = test::temp_dir();
  auto r = test::run_kbsim_with(mpirun(2), "run --bench ccl-allreduce --out " + (dir / "out").string());
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("kbsim: error: this system cannot be split over 2 ranks yet: its "));
  EXPECT_THAT(r.err, HasSubstr("takes flits, which cannot cross between processes"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
  auto whole = test::run_kbsim_with(mpirun(2), "run --bench ccl-allreduce --partition none --out " +
                                                   (dir / "whole").string());
  EXPECT_EQ(whole.code, 0) << whole.err;
}

}  // namespace
}  // namespace kbsim
