// One simulation split over the ranks of `mpirun` (docs/scale-out.md): the
// same results for any number of ranks, and errors that end every rank with one
// line. Skipped in a build without MPI or on a machine without mpirun.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <initializer_list>
#include <utility>
#include <vector>

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
  if (d.HasMember("data_pass")) d["data_pass"].RemoveMember("wall_time_s");
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  d.Accept(w);
  return out.GetString();
}

/// The trace or op log (`file`) of the run whose --out is `dir`: beside it (--trace needs its folder to exist).
fs::path log_file(const fs::path& dir, const char* file) { return dir.string() + "-" + file; }

/// `--out DIR`, and with `logs`, the trace and the op log beside it.
std::string outputs(const fs::path& dir, bool logs) {
  return " --out " + dir.string() +
         (logs ? " --trace " + log_file(dir, "trace.json").string() + " --op-log " +
                     log_file(dir, "op_log.json").string()
               : "");
}

/// Run `bench` (a `run` command line without --out) in one process and under mpirun on 1 to 4 ranks: the same
/// results.json apart from the host's figures, the same topology.json (and with `logs`, the same trace and op log,
/// byte for byte); the split ranks print `windows`.
void expect_ranks_write_the_results_of_one_process(const std::string& bench, const std::string& windows,
                                                   bool logs = false) {
  const fs::path dir = test::temp_dir();
  auto serial = test::run_kbsim(bench + outputs(dir / "serial", logs));
  ASSERT_EQ(serial.code, 0) << serial.err;
  const std::string want = results_without_host(dir / "serial" / "results.json");
  for (unsigned ranks : {1u, 2u, 3u, 4u}) {
    const fs::path out = dir / ("np" + std::to_string(ranks));
    auto r = test::run_kbsim_with(mpirun(ranks), bench + outputs(out, logs));
    ASSERT_EQ(r.code, 0) << ranks << " ranks: " << r.err;
    EXPECT_EQ(results_without_host(out / "results.json"), want) << ranks << " ranks";
    EXPECT_EQ(test::read_file(out / "topology.json"), test::read_file(dir / "serial" / "topology.json"));
    for (const char* file : {"trace.json", "op_log.json"})
      if (logs) {
        const std::string got = test::read_file(log_file(out, file));
        EXPECT_TRUE(!got.empty() && got == test::read_file(log_file(dir / "serial", file)))
            << ranks << " ranks: " << file << " differs";
      }
    if (ranks > 1) {
      EXPECT_THAT(r.out, HasSubstr("split      " + std::to_string(ranks) + " ranks")) << r.out;
      EXPECT_THAT(r.out, HasSubstr(windows)) << r.out;
      EXPECT_THAT(test::read_file(out / "results.json"), HasSubstr("\"ranks\": " + std::to_string(ranks)));
    }
  }
  // Every rank running the whole system (--partition none) gives them too; rank 0 writes.
  auto whole = test::run_kbsim_with(mpirun(2), bench + " --out " + (dir / "none").string() + " --partition none");
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_EQ(results_without_host(dir / "none" / "results.json"), want);
  EXPECT_THAT(whole.out, ::testing::Not(HasSubstr("split")));
}

/// Run each bench (the rest of a `run --bench` command line) in one process and over `ranks` ranks: the same
/// results.json apart from the host's figures.
void expect_benches_over_ranks_write_the_results_of_one_process(const std::vector<std::string>& benches,
                                                                unsigned ranks) {
  const fs::path dir = test::temp_dir();
  for (const std::string& bench : benches) {
    auto serial = test::run_kbsim("run --bench " + bench + " --out " + (dir / "serial").string());
    ASSERT_EQ(serial.code, 0) << bench << ": " << serial.err;
    auto split = test::run_kbsim_with(mpirun(ranks), "run --bench " + bench + " --out " + (dir / "split").string());
    ASSERT_EQ(split.code, 0) << bench << ": " << split.err;
    EXPECT_THAT(split.out, HasSubstr("split      " + std::to_string(ranks) + " ranks")) << bench;
    EXPECT_EQ(results_without_host(dir / "split" / "results.json"),
              results_without_host(dir / "serial" / "results.json"))
        << bench;
  }
}

TEST(Mpi, AMeshOverOneToFourRanksWritesTheResultsOfOneProcess) {
  if (!have_mpi()) GTEST_SKIP() << "no mpirun, or kbsim built without MPI";
  expect_ranks_write_the_results_of_one_process("run --bench message-mesh --param x=6 --param y=6 --param stop_ns=300",
                                                "lookahead 1 ns, 301 windows");
}

TEST(Mpi, PacketsThroughRoutersOverOneToFourRanksWriteTheResultsOfOneProcess) {
  // Endpoints at both ends of a chain of routers that pass packets on flit by flit, run to the end: flits, trains of
  // them and whole messages cross the cuts, and every rank ends at the last event of any.
  if (!have_mpi()) GTEST_SKIP() << "no mpirun, or kbsim built without MPI";
  const fs::path dir = test::temp_dir();
  std::string t = "nodes:\n";
  for (const char* e : {"a0", "a1"})
    t += std::string("  - { id: ") + e + ", impl: builtin.endpoint, params: { send_to: " + (e[1] == '0' ? "b1" : "b0") +
         ", send_bytes: 900, count: 5, interval_ns: 4 } }\n";
  for (int k = 0; k < 4; ++k) t += "  - { id: r" + std::to_string(k) + ", impl: builtin.forwarding }\n";
  for (const char* e : {"b0", "b1"})
    t += std::string("  - { id: ") + e + ", impl: builtin.endpoint, params: { send_to: a0, send_bytes: 200 } }\n";
  t += "edges:\n";
  using Pair = std::pair<const char*, const char*>;
  for (const auto& [x, y] : std::initializer_list<Pair>{
           {"a0", "r0"}, {"a1", "r0"}, {"r0", "r1"}, {"r1", "r2"}, {"r2", "r3"}, {"r3", "b0"}, {"r3", "b1"}})
    for (const auto& [s, d] : {Pair{x, y}, Pair{y, x}})
      t += std::string("  - { src: ") + s + ", dst: " + d + ", latency_ns: 1, bandwidth_gbs: 64, flit_bytes: 64 }\n";
  test::write_file(dir / "chain.yaml", t);
  expect_ranks_write_the_results_of_one_process("run --bench traffic --topology " + (dir / "chain.yaml").string(),
                                                "lookahead 1 ns, ");
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

TEST(Mpi, AnAllreduceAcrossSipsOverOneToFourRanksWritesTheResultsOfOneProcess) {
  // The AHBM model split: by SIP over 2 ranks (its IO chiplets and PCIe switch with SIP 0), by cube over 3 and 4.
  // The host runtime on every rank, its commands and memory requests answered across ranks, kernels and IPCQ
  // traffic on both sides of the cuts.
  if (!have_mpi()) GTEST_SKIP() << "no mpirun, or kbsim built without MPI";
  expect_ranks_write_the_results_of_one_process("run --bench ccl-allreduce --param n_elem=4096", "lookahead 0.");
}

TEST(Mpi, UciePhysModeledAsAPipelineCutTheSystemWithWindowsLongerByIt) {
  // Their 8 ns as a per-flit pipeline instead of a per-transaction overhead (docs/model.md, "Transit nodes"): every
  // PHY promises it, so the cuts at the PHYs (IO chiplet to cube, 0.2 ns; cube to cube, 0.1 ns) get 8.1 to 8.2 ns of
  // lookahead, and the checked promise holds on every message that crosses.
  if (!have_mpi()) GTEST_SKIP() << "no mpirun, or kbsim built without MPI";
  std::string pipelined;
  for (const char* phy : {"cube.components.ucie", "sip.io_chiplets.io0.components.io_ucie"})
    pipelined += std::string(" --set ") + phy + ".attrs.overhead_ns=0 --set " + phy + ".attrs.pipeline_ns=8";
  expect_ranks_write_the_results_of_one_process("run --bench ccl-allreduce --param n_elem=4096" + pipelined,
                                                "lookahead 8.");
}

TEST(Mpi, TheDataPassTheTraceAndTheOpLogOfASplitRunAreThoseOfOneProcess) {
  // Each rank logs its own components' records; the ranks merge them into the order one process logs them in, and
  // every rank's data pass computes the same values from them (the allreduce checks its sums). Over 3 and 4 ranks
  // the cubes of one SIP are on different ranks, and their records meet at one instant.
  if (!have_mpi()) GTEST_SKIP() << "no mpirun, or kbsim built without MPI";
  expect_ranks_write_the_results_of_one_process("run --bench ccl-allreduce --param n_elem=4096 --verify-data",
                                                "lookahead 0.", true);
}

TEST(Mpi, TheAttentionBenchReadsTheMergedOpLogOverTwoAndFourRanks) {
  // Its KV sequence over a ring of the cubes of SIP 0, which 4 ranks split; it counts the op log's records itself.
  if (!have_mpi()) GTEST_SKIP() << "no mpirun, or kbsim built without MPI";
  const fs::path dir = test::temp_dir();
  const std::string bench =
      "run --bench gqa-attention --param panel=multi_user_prefill --param scale=validation --verify-data";
  auto serial = test::run_kbsim(bench + outputs(dir / "serial", true));
  ASSERT_EQ(serial.code, 0) << serial.err;
  for (unsigned ranks : {2u, 4u}) {
    const fs::path out = dir / ("np" + std::to_string(ranks));
    auto r = test::run_kbsim_with(mpirun(ranks), bench + outputs(out, true));
    ASSERT_EQ(r.code, 0) << ranks << " ranks: " << r.err;
    EXPECT_THAT(r.out, HasSubstr("split      " + std::to_string(ranks) + " ranks")) << r.out;
    EXPECT_EQ(results_without_host(out / "results.json"), results_without_host(dir / "serial" / "results.json"));
    for (const char* file : {"op_log.json", "trace.json"})
      EXPECT_TRUE(test::read_file(log_file(out, file)) == test::read_file(log_file(dir / "serial", file)))
          << ranks << " ranks: " << file << " differs";
  }
}

TEST(Mpi, TheBenchesThatDriveTheHostRuntimeOverTwoRanksWriteTheResultsOfOneProcess) {
  if (!have_mpi()) GTEST_SKIP() << "no mpirun, or kbsim built without MPI";
  expect_benches_over_ranks_write_the_results_of_one_process(
      {"pe2pe-latency --param sizes=128,1024", "gemm-single-pe", "matmul-composite --param K=256",
       "tp-mlp --param D_in=64 --param D_hidden=512 --param D_out=64", "va-offset-verify",
       "host-api-tour --device all --param pes=4"},
      2);
}

TEST(Mpi, AStuckCollectiveAcrossRanksEndsEveryRankWithTheLineOfOneProcess) {
  // A 2-SIP ring whose kernels receive from the wrong side: every rank finds the run stuck at the same time, and
  // the error says who waits on what on every rank, as one process says it.
  if (!have_mpi()) GTEST_SKIP() << "no mpirun, or kbsim built without MPI";
  const fs::path dir = test::temp_dir();
  const std::string run =
      "run --bench ccl-allreduce --param n_elem=8 --set ccl.algorithm=stuck_ring --set "
      "ccl.stuck_ring.fault=wrong_direction --plugins " +
      (fs::path(KBSIM_TEST_PLUGIN_DIR) / "ccl_stuck").string() + " --out " + (dir / "out").string();
  auto serial = test::run_kbsim(run);
  ASSERT_EQ(serial.code, 5) << serial.err;
  for (unsigned ranks : {2u, 3u}) {
    auto r = test::run_kbsim_with(mpirun(ranks), run);
    EXPECT_EQ(r.code, 5) << ranks << " ranks: " << r.err;
    EXPECT_EQ(r.err, serial.err) << ranks << " ranks";
    EXPECT_FALSE(fs::exists(dir / "out" / "results.json")) << "nothing half-written";
  }
  EXPECT_THAT(serial.err, HasSubstr("sip1.cube0.pe0.pe_ipcq: holds 1 message(s)")) << "rank 1's part is in it";
}

TEST(Mpi, TheBenchesThatDriveInitiatorsThemselvesWriteTheResultsOfOneProcess) {
  // They submit memory requests to the PEs' DMA engines directly; every rank hears of every completion (through a
  // BenchMemClient) and reads the statistics every rank gathers.
  if (!have_mpi()) GTEST_SKIP() << "no mpirun, or kbsim built without MPI";
  expect_benches_over_ranks_write_the_results_of_one_process(
      {"pe-dma-perf", "probe", "probe --param case=d2h-2hop --param bytes=4096"}, 2);
  // Over 4 ranks the cubes of SIP 0 are apart: the initiators and memories of one scenario are on several ranks.
  expect_benches_over_ranks_write_the_results_of_one_process({"pe-dma-perf"}, 4);
  expect_benches_over_ranks_write_the_results_of_one_process({"fidelity"}, 2);  // (its nested benches run whole)
}

TEST(Mpi, ABenchThatDoesNotSayItSplitsIsOneConfigErrorBeforeAnythingRuns) {
  if (!have_mpi()) GTEST_SKIP() << "no mpirun, or kbsim built without MPI";
  const fs::path dir = test::temp_dir();
  const std::string plugins = " --plugins " + (fs::path(KBSIM_TEST_PLUGIN_DIR) / "ccl_stuck").string();
  auto r = test::run_kbsim_with(mpirun(2), "run --bench dist-misuse" + plugins + " --out " + (dir / "out").string());
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("kbsim: error: bench 'dist-misuse' cannot run split over 2 ranks: it drives "
                               "components through their own interfaces"));
  EXPECT_THAT(r.err, HasSubstr("--partition none runs the whole system on every rank"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
  EXPECT_FALSE(fs::exists(dir / "out" / "results.json")) << "nothing half-written";
  auto whole =
      test::run_kbsim_with(mpirun(2), "run --bench pe-dma-perf --partition none --out " + (dir / "whole").string());
  EXPECT_EQ(whole.code, 0) << whole.err;
}

TEST(Mpi, TheProbeCommandOverTwoAndThreeRanksPrintsWhatOneProcessPrints) {
  if (!have_mpi()) GTEST_SKIP() << "no mpirun, or kbsim built without MPI";
  const std::string probe = "probe --json --bytes 4096";
  auto one = test::run_kbsim(probe);
  ASSERT_EQ(one.code, 0) << one.err;
  for (unsigned ranks : {2u, 3u}) {
    auto r = test::run_kbsim_with(mpirun(ranks), probe);  // its systems split; rank 0 prints
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, one.out) << ranks << " ranks";
  }
}

TEST(Mpi, ACommandThatRunsInOneProcessIsRefusedUnderMpirunWithOneLine) {
  if (!have_mpi()) GTEST_SKIP() << "no mpirun, or kbsim built without MPI";
  auto r = test::run_kbsim_with(mpirun(2), "web --port 0");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("kbsim: error: kbsim web runs in one process, not over 2 MPI ranks: start it "
                               "without mpirun"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
}

}  // namespace
}  // namespace kbsim
