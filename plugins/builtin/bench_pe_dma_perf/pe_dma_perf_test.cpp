// The pe-dma-perf bench through the command line: every scenario and self-check
// on the default AHBM system, and latencies worked out by hand from the model.
//
// The default system's numbers that matter here (topology.yaml, docs/model.md):
// flits of 256 B; pe_dma -> router 256 GB/s (1 ns a flit); router links 256 GB/s
// and 0.1 ns/mm (PE0 r0c0 at x 1.5 mm, PE1 r0c1 at 3.0 mm, relay columns at 6
// and 9 mm, PE2 r1c4 at 12 mm / row 1.5 mm lower); router overhead 2 ns on a
// message's first flit; router -> hbm_ctrl 8 x 32 GB/s x efficiency 1.0 =
// 256 GB/s (1 ns a flit); a 256 B burst holds its pseudo-channel
// (PC = offset / 256 mod 8) for 256 B / 32 GB/s = 8 ns; the write
// acknowledgement is a 0-byte message (no serialization, only latency and
// overheads); UCIe connection links 128 GB/s (2 ns a flit), cube UCIe ports
// 8 ns each, seam 512 GB/s over 1 mm.
//
// The hand-worked cross-cube cases run in the alternative configuration
// (kLegacy: quickest-path routing, HBM efficiency 0.8, 32 KiB), where each
// flow takes its nearest UCIe connection and the controller link is 204.8 GB/s
// (1.25 ns a flit); the calibrated defaults are pinned by the fidelity bench.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <memory>
#include <string>

#include "kbsim/testing_cli.hpp"
#include "kbsim/testing_figure.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kbsim {
namespace {

const char* const kScenarios[] = {"same_cube_pe_local",
                                  "same_cube_pe_remote_best",
                                  "same_cube_pe_remote_worst",
                                  "remote_cube_best",
                                  "remote_cube_worst",
                                  "remote_sip",
                                  "ctrl_hot_1",
                                  "ctrl_hot_2",
                                  "ctrl_hot_3",
                                  "eastbound_8pe",
                                  "all_pe_cube0_to_pe0",
                                  "sip_local_all",
                                  "sip_hotspot_pe0"};

struct BenchRun {
  testkit::CliResult cli;
  std::unique_ptr<rapidjson::Document> results;  ///< null if no results.json was written
  const rapidjson::Value& metrics() const { return (*results)["metrics"]; }
  const rapidjson::Value& scenario(const char* name) const { return metrics()["scenarios"][name]; }
  double number(const char* name, const char* key) const { return scenario(name)[key].GetDouble(); }
};

/// Run the bench with extra options; parse its results and delete its (large) output.
BenchRun run_bench(const std::string& extra) {
  static int runs = 0;
  auto out = testkit::temp_dir() / ("pe_dma_perf" + std::to_string(++runs));
  BenchRun r;
  r.cli = testkit::run_kbsim("run --bench pe-dma-perf " + extra + " --out " + out.string());
  if (std::filesystem::exists(out / "results.json")) {
    r.results = std::make_unique<rapidjson::Document>();
    r.results->Parse(testkit::read_file(out / "results.json").c_str());
    EXPECT_FALSE(r.results->HasParseError());
  }
  std::filesystem::remove_all(out);
  return r;
}

/// The default run, shared by the tests that only read it.
const BenchRun& default_run() {
  static const BenchRun r = run_bench("");
  return r;
}

const std::string kLegacy = "--set system.routing=latency --set cube.components.hbm_ctrl.attrs.efficiency=0.8 ";

/// The alternative configuration's run, shared by the tests that read it.
const BenchRun& legacy_run() {
  static const BenchRun r = run_bench(kLegacy + "--param bytes=32768");
  return r;
}

TEST(PeDmaPerf, DefaultRunReportsEveryScenarioAndPassesEveryCheck) {
  const BenchRun& r = default_run();
  ASSERT_EQ(r.cli.code, 0) << r.cli.err;
  ASSERT_TRUE(r.results);
  const auto& scenarios = r.metrics()["scenarios"];
  EXPECT_EQ(scenarios.MemberCount(), 13u);
  for (const char* name : kScenarios) {
    ASSERT_TRUE(scenarios.HasMember(name)) << name;
    const auto& s = scenarios[name];
    for (const char* key : {"issuers", "bytes", "makespan_ns", "eff_bw_gbs", "peak_single_gbs", "util_single_pct",
                            "peak_aggregate_gbs", "util_aggregate_pct", "ucie_crossings", "hops"})
      EXPECT_TRUE(s.HasMember(key)) << name << "." << key;
    EXPECT_EQ(s["failed"].GetUint64(), 0u) << name;
    EXPECT_EQ(s["completed"].GetUint64(), s["issuers"].GetUint64()) << name;
  }
  EXPECT_EQ(scenarios["sip_hotspot_pe0"]["issuers"].GetUint64(), 128u);
  EXPECT_EQ(scenarios["sip_local_all"]["bytes"].GetUint64(), 16384u);
  const auto& checks = r.metrics()["checks"];
  EXPECT_EQ(checks.MemberCount(), 14u);
  for (const auto& c : checks.GetObject()) EXPECT_TRUE(c.value.GetBool()) << c.name.GetString();
  EXPECT_THAT(r.cli.out, HasSubstr("PASS distance_monotonic"));
  EXPECT_THAT(r.cli.out, Not(HasSubstr("FAIL")));
}

TEST(PeDmaPerf, WritesItsFiguresWithTheReferencesColourBands) {
  const auto dir = testkit::temp_dir() / "pe_dma_figures";
  auto r = testkit::run_kbsim("run --bench pe-dma-perf --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string util = testkit::read_file(dir / "pe_dma_utilization.svg");
  EXPECT_THAT(util, HasSubstr("PE_DMA utilization per scenario"));
  EXPECT_THAT(util, HasSubstr("good (&gt;= 70 %)"));
  // Bars take their band's colour: same_cube_pe_local (83 %) green, remote_cube_worst (24 %) red.
  EXPECT_THAT(util, HasSubstr("fill=\"#2ca02c\"/>"));
  EXPECT_THAT(util, HasSubstr("fill=\"#d62728\"/>"));
  EXPECT_THAT(testkit::read_file(dir / "pe_dma_perf.csv"), HasSubstr("same_cube_pe_local,1,16384,77.0,"));
  EXPECT_THAT(testkit::read_file(dir / "index.html"), HasSubstr("src=\"pe_dma_latency.svg\""));
  if (!testkit::can_render_svg()) GTEST_SKIP() << "rsvg-convert is missing: the figures were not rendered";
  EXPECT_THAT(testkit::read_file(dir / "breakdown_no_congestion.svg"), HasSubstr("wire_transfer"));
  EXPECT_THAT(testkit::read_file(dir / "breakdown_congestion.svg"), HasSubstr("all_pe_cube0_to_pe0"));
  EXPECT_THAT(testkit::read_file(dir / "pe_dma_breakdown.csv"),
              HasSubstr("same_cube_pe_local,1.0,4.0,0.0,0.0,63.0,8.0,1.0,"));
  for (const char* f :
       {"pe_dma_latency.svg", "pe_dma_utilization.svg", "breakdown_no_congestion.svg", "breakdown_congestion.svg"}) {
    const testkit::Ink ink = testkit::render_svg(dir / f);
    EXPECT_TRUE(ink.error.empty()) << ink.error;
    EXPECT_GT(ink.drawn, ink.pixels / 20) << f;
  }
}

// The lone local write of 16 KiB (64 flits), by part: the first flit crosses the pe_dma link (1 ns, the path's
// bottleneck at 256 GB/s, so pe_setup), the router's overhead (2 ns) and the wires' 0.1 ns/mm to the controller and
// back for the 0-byte acknowledgement (noc_mesh 4 ns); the other 63 flits stream behind it at 1 ns each
// (wire_transfer); the last burst holds its pseudo-channel 8 ns (hbm_ctrl); 1 ns is left (contention).
TEST(PeDmaPerf, TheLocalLatencyBreaksDownAsTheModelSays) {
  const BenchRun& r = default_run();
  ASSERT_TRUE(r.results) << r.cli.err;
  const auto& b = r.scenario("same_cube_pe_local")["breakdown"];
  EXPECT_DOUBLE_EQ(b["pe_setup_ns"].GetDouble(), 1.0);
  EXPECT_DOUBLE_EQ(b["noc_mesh_ns"].GetDouble(), 4.0);
  EXPECT_DOUBLE_EQ(b["ucie_ns"].GetDouble(), 0.0);
  EXPECT_DOUBLE_EQ(b["fabric_ns"].GetDouble(), 0.0);
  EXPECT_DOUBLE_EQ(b["wire_transfer_ns"].GetDouble(), 63.0);
  EXPECT_DOUBLE_EQ(b["hbm_ctrl_ns"].GetDouble(), 8.0);
  EXPECT_NEAR(b["contention_ns"].GetDouble(), 1.0, 1e-9);
  for (const char* name : kScenarios) {  // the parts add up to what was measured
    const auto& s = r.scenario(name);
    const double actual = s.HasMember("latency_ns") ? s["latency_ns"].GetDouble() : s["makespan_ns"].GetDouble();
    EXPECT_NEAR(s["breakdown"]["formula_ns"].GetDouble() + s["breakdown"]["contention_ns"].GetDouble(), actual, 1e-9)
        << name;
  }
  // Across SIPs the PCIe endpoints store and forward: the path explains about half.
  EXPECT_GT(r.scenario("remote_sip")["breakdown"]["fabric_ns"].GetDouble(), 0.0);
  EXPECT_GT(r.scenario("remote_sip")["breakdown"]["contention_ns"].GetDouble(),
            r.scenario("remote_cube_best")["breakdown"]["contention_ns"].GetDouble());
}

TEST(PeDmaPerf, LatencyGrowsWithDistanceAndMakespanWithIssuers) {
  const BenchRun& r = default_run();
  ASSERT_TRUE(r.results) << r.cli.err;
  auto latency = [&](const char* name) { return r.number(name, "latency_ns"); };
  EXPECT_LT(latency("same_cube_pe_local"), latency("same_cube_pe_remote_best"));
  EXPECT_LE(latency("same_cube_pe_remote_best"), latency("same_cube_pe_remote_worst"));
  EXPECT_LT(latency("same_cube_pe_remote_worst"), latency("remote_cube_best"));
  EXPECT_LE(latency("remote_cube_best"), latency("remote_cube_worst"));
  // The reference measured the other SIP (next to its IO chiplet) quicker than the farthest cube.
  EXPECT_LT(latency("same_cube_pe_remote_worst"), latency("remote_sip"));
  EXPECT_LT(latency("remote_sip"), latency("remote_cube_worst"));
  EXPECT_GT(r.number("ctrl_hot_3", "makespan_ns"), r.number("ctrl_hot_1", "makespan_ns"));
  EXPECT_GT(r.number("all_pe_cube0_to_pe0", "makespan_ns"), r.number("ctrl_hot_3", "makespan_ns"));
}

TEST(PeDmaPerf, DefaultWriteLatenciesMatchTheHandComputedModel) {
  const BenchRun& r = default_run();
  ASSERT_TRUE(r.results) << r.cli.err;
  EXPECT_EQ(std::string(r.metrics()["routing"].GetString()), "distance");
  // Local, 16 KiB = N = 64 flits. Flit i reaches r0c0 at (i + 1) ns; the router's 2 ns
  // overhead sends flit 0 on at 3 ns, and the 1 ns controller link keeps pace, so flit i
  // reaches the controller at 4 + i; a PC sees a burst every 8 ns, as fast as it commits
  // them, so the last commits at 4 + 63 + 8 = 75 ns; the ack pays r0c0's 2 ns: 13 + N.
  EXPECT_DOUBLE_EQ(r.number("same_cube_pe_local", "latency_ns"), 77.0);
  EXPECT_DOUBLE_EQ(r.number("same_cube_pe_local", "peak_single_gbs"), 256.0);  // FIGURES.md: 8 x 32 GB/s
  // PE1's slice: flit 0 at the controller at 1 + 2 + 1.15 + 2 + 1 = 7.15, the last at
  // 70.15, committed at 78.15; the ack passes r0c0, 0.15 ns of wire and r0c1: 82.3 ns.
  EXPECT_DOUBLE_EQ(r.number("same_cube_pe_remote_best", "latency_ns"), 82.3);
  // Every PE to its own slice at once: 77 ns, no interference; 128 x 256 GB/s.
  EXPECT_DOUBLE_EQ(r.number("sip_local_all", "makespan_ns"), 77.0);
  EXPECT_NEAR(r.number("sip_local_all", "peak_aggregate_gbs"), 128 * 256.0, 1e-6);
  // Distance routing funnels seven of the eight eastbound flows through cube 1's
  // ucie-W.conn0: 7 x 128/7 plus the eighth flow's 32 GB/s (its cube-0 connection is
  // shared four ways) = the reference's 160 GB/s aggregate peak.
  EXPECT_NEAR(r.number("eastbound_8pe", "peak_aggregate_gbs"), 160.0, 1e-9);
  EXPECT_DOUBLE_EQ(r.number("remote_sip", "peak_single_gbs"), 128.0);  // one UCIe connection; PCIe links 256
  // Every transfer's route is reported (which of the tied routes it took); a scenario of one transfer has one.
  const auto& east = r.scenario("eastbound_8pe")["routes"];
  ASSERT_TRUE(east.IsArray());
  ASSERT_EQ(east.Size(), 8u);
  EXPECT_STREQ(east[4][0].GetString(), "sip0.cube0.pe4.pe_dma");
  EXPECT_STREQ(east[4][east[4].Size() - 1].GetString(), "sip0.cube1.hbm_ctrl.pe4");
  EXPECT_EQ(east[0], r.scenario("eastbound_8pe")["route"]);
  EXPECT_FALSE(r.scenario("remote_sip").HasMember("routes"));
}

TEST(PeDmaPerf, WriteLatenciesMatchTheHandComputedModel) {
  const BenchRun& r = legacy_run();
  ASSERT_TRUE(r.results) << r.cli.err;
  EXPECT_EQ(std::string(r.metrics()["routing"].GetString()), "latency");
  // Local, 32 KiB = N = 128 flits. Flit i reaches r0c0 at (i + 1) ns; the router's
  // 2 ns overhead sends flit 0 on at 3 ns; the 1.25 ns hbm link is slower than the
  // 1 ns input, so flit i reaches the controller at 3 + 1.25 (i + 1): the last at
  // 163 ns. A PC sees a burst every 8 x 1.25 = 10 ns > 8 ns, so the last burst
  // commits at 171 ns; the 0-byte ack pays only r0c0's 2 ns: 173 ns = 13 + 1.25 N.
  EXPECT_DOUBLE_EQ(r.number("same_cube_pe_local", "latency_ns"), 173.0);
  EXPECT_DOUBLE_EQ(r.number("same_cube_pe_local", "peak_single_gbs"), 204.8);
  EXPECT_DOUBLE_EQ(r.number("same_cube_pe_local", "eff_bw_gbs"), 32768.0 / 173.0);
  // PE1's slice: one more router and a 1.5 mm link: flit 0 reaches the controller
  // at 1 + 2 + (1 + 0.15) + 2 + 1.25 = 7.4 ns, the last 127 x 1.25 later (166.15),
  // commits at 174.15; the ack passes r0c1, 0.15 ns of wire and r0c0: 178.3 ns.
  EXPECT_DOUBLE_EQ(r.number("same_cube_pe_remote_best", "latency_ns"), 178.3);
  // Cube 1's PE0 slice over the east seam. Flit 0: 1 + six routers (12) + five mesh
  // links (5 + 12 mm = 1.2) + r0c5 -> conn0 -> ucie-E at 128 GB/s (2 + 2) + ucie-E 8 +
  // seam 0.5 + 0.1 + ucie-W 8 = 39.8 ns leaving ucie-W. The 8 ns port overheads have
  // queued flits, so from there on the 2 ns connection links pace them: the last
  // leaves ucie-W at 39.8 + 2 x 127 = 293.8, reaches cube 1's r0c0 at 297.8 (conn0
  // link 2, r0c0 link 2) and the controller at 299.05, commits at 307.05. The ack:
  // r0c0 2 + ucie-W 8 + 0.1 + ucie-E 8 + six routers 12 + 1.2 of wire = 31.3.
  EXPECT_DOUBLE_EQ(r.number("remote_cube_best", "latency_ns"), 338.35);
  EXPECT_DOUBLE_EQ(r.number("remote_cube_best", "peak_single_gbs"), 128.0);  // one UCIe connection
  EXPECT_EQ(r.scenario("remote_cube_best")["ucie_crossings"].GetUint64(), 1u);
  EXPECT_EQ(r.scenario("remote_cube_worst")["ucie_crossings"].GetUint64(), 6u);  // 3 east + 3 south
  EXPECT_EQ(r.scenario("remote_sip")["ucie_crossings"].GetUint64(), 2u);         // cube -> IO chiplet, and back
  EXPECT_DOUBLE_EQ(r.number("remote_sip", "peak_single_gbs"), 128.0);            // one UCIe connection
  // Every PE to its own slice, 16 KiB (N = 64): 13 + 1.25 x 64 = 93 ns, no interference.
  EXPECT_DOUBLE_EQ(r.number("sip_local_all", "makespan_ns"), 93.0);
  EXPECT_NEAR(r.number("sip_local_all", "peak_aggregate_gbs"), 128 * 204.8, 1e-6);
  // Eight routes over four 128 GB/s connections, two each: 8 x 64 GB/s.
  EXPECT_NEAR(r.number("eastbound_8pe", "peak_aggregate_gbs"), 512.0, 1e-9);
  // Hot spots are bounded by pe0's 204.8 GB/s controller link plus one burst.
  EXPECT_GT(r.number("all_pe_cube0_to_pe0", "makespan_ns"), 8 * 128 * 1.25 + 8);
  EXPECT_GT(r.number("sip_hotspot_pe0", "makespan_ns"), 128 * 64 * 1.25 + 8);
}

TEST(PeDmaPerf, ReadLatenciesMatchTheHandComputedModel) {
  BenchRun r = run_bench(kLegacy + "--param bytes=32768 --param op=read --param sip_wide=false");
  ASSERT_EQ(r.cli.code, 0) << r.cli.err;
  ASSERT_TRUE(r.results);
  EXPECT_EQ(r.metrics()["scenarios"].MemberCount(), 11u);
  // The 0-byte request reaches the controller after r0c0's 2 ns; all bursts are
  // scheduled at once and each streams out as its PC starts it: 8 PCs give 8 flits
  // every 8 ns, faster than the 1.25 ns link back, so flit i is on that link until
  // 2 + 1.25 (i + 1) and the last reaches r0c0 at 162 ns; it crosses the 1 ns PE
  // link at 163 ns = 3 + 1.25 N.
  EXPECT_DOUBLE_EQ(r.number("same_cube_pe_local", "latency_ns"), 163.0);
  // PE1's slice: request 2 + 0.15 + 2; data leaves from 4.15 ns every 1.25 ns; the
  // last reaches r0c0 at 164.15, r0c1 at 165.3 and the PE at 166.3 ns.
  EXPECT_DOUBLE_EQ(r.number("same_cube_pe_remote_best", "latency_ns"), 166.3);
}

// The other SIP is two UCIe crossings and two PCIe links away (its IO chiplet
// sits next to cube 0), the farthest cube six crossings and the NoCs between
// them: the reference's order, remote SIP quicker, holds at every size.
TEST(PeDmaPerf, SmallTransfersKeepTheDistanceOrder) {
  for (const char* bytes : {"256", "4096"}) {
    BenchRun r = run_bench(std::string("--param sip_wide=false --param bytes=") + bytes);
    ASSERT_EQ(r.cli.code, 0) << bytes << ": " << r.cli.err;
    EXPECT_LT(r.number("remote_sip", "latency_ns"), r.number("remote_cube_worst", "latency_ns")) << bytes;
  }
}

TEST(PeDmaPerf, SmallTransfersMatchTheHandComputedModel) {
  BenchRun r = run_bench(kLegacy + "--param bytes=4096");
  ASSERT_EQ(r.cli.code, 0) << r.cli.err;
  ASSERT_TRUE(r.results);
  EXPECT_EQ(r.scenario("same_cube_pe_local")["bytes"].GetUint64(), 4096u);
  // N = 16 flits in the formulas above.
  EXPECT_DOUBLE_EQ(r.number("same_cube_pe_local", "latency_ns"), 13 + 1.25 * 16);                    // 33
  EXPECT_DOUBLE_EQ(r.number("same_cube_pe_remote_best", "latency_ns"), 7.4 + 1.25 * 15 + 8 + 4.15);  // 38.3
  EXPECT_DOUBLE_EQ(r.number("remote_cube_best", "latency_ns"), 39.8 + 2 * 15 + 5.25 + 8 + 31.3);     // 114.35
  // PE1 and PE2 into PE0's slice: from PE1's first flit at 6.15 ns (1 + 2 + 1.15 + 2)
  // the 1.25 ns controller link never idles (two 256 GB/s streams feed it) for
  // 32 flits: 46.15; the last burst commits at 54.15; the ack back to PE2 (r1c4)
  // passes six routers (12) and 12 mm of wire (1.2): 67.35 ns.
  EXPECT_DOUBLE_EQ(r.number("ctrl_hot_2", "makespan_ns"), 6.15 + 32 * 1.25 + 8 + 13.2);
}

TEST(PeDmaPerf, BadParametersAreConfigErrors) {
  auto op = testkit::run_kbsim("run --bench pe-dma-perf --param op=copy --out " + testkit::temp_dir().string());
  EXPECT_EQ(op.code, 3);
  EXPECT_THAT(op.err, HasSubstr("parameter 'op' must be write or read"));
  auto bytes = testkit::run_kbsim("run --bench pe-dma-perf --param bytes=0 --out " + testkit::temp_dir().string());
  EXPECT_EQ(bytes.code, 3);
  EXPECT_THAT(bytes.err, HasSubstr("parameter 'bytes' must be in 1.."));
}

}  // namespace
}  // namespace kbsim
