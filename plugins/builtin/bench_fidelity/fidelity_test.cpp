// The fidelity bench through the command line: the default system reproduces
// every figure the reference measured, and moving one calibrated setting back
// fails the run naming the figure it moved.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <string>

#include "kbsim/testing_cli.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kbsim {
namespace {

struct FidelityRun {
  testkit::CliResult cli;
  rapidjson::Document results;
  bool written = false;
};

FidelityRun run_fidelity(const std::string& extra) {
  static int runs = 0;
  auto out = testkit::temp_dir() / ("fidelity" + std::to_string(++runs));
  FidelityRun r;
  r.cli = testkit::run_kbsim("run --bench fidelity " + extra + " --out " + out.string());
  if (std::filesystem::exists(out / "results.json")) {
    r.written = true;
    r.results.Parse(testkit::read_file(out / "results.json").c_str());
  }
  std::filesystem::remove_all(out);
  return r;
}

const FidelityRun& default_run() {
  static const FidelityRun r = run_fidelity("");
  return r;
}

double figure(const FidelityRun& r, const char* name) {
  return r.results["metrics"]["figures"][name]["kbsim"].GetDouble();
}

TEST(Fidelity, TheDefaultSystemReproducesEveryMeasuredFigure) {
  const FidelityRun& r = default_run();
  ASSERT_EQ(r.cli.code, 0) << r.cli.err;
  ASSERT_TRUE(r.written);
  const auto& m = r.results["metrics"];
  EXPECT_TRUE(m["pass"].GetBool());
  EXPECT_EQ(m["figures"].MemberCount(), 18u);
  for (const auto& f : m["figures"].GetObject()) EXPECT_TRUE(f.value["pass"].GetBool()) << f.name.GetString();
  EXPECT_EQ(m["orderings"].MemberCount(), 31u);  // pe-dma-perf's 14 checks among them
  for (const auto& o : m["orderings"].GetObject()) EXPECT_TRUE(o.value.GetBool()) << o.name.GetString();
  EXPECT_EQ(m["pending"].MemberCount(), 0u);  // the collectives are measured now
  EXPECT_THAT(r.cli.out, HasSubstr("figures within 5%"));
  EXPECT_THAT(r.cli.out, Not(HasSubstr("MISS")));
  EXPECT_THAT(r.cli.out, Not(HasSubstr("FAIL ")));
}

// The calibrated figures in exact simulated ns (docs/model.md, "Fidelity").
TEST(Fidelity, CalibratedFiguresAreExact) {
  const FidelityRun& r = default_run();
  ASSERT_TRUE(r.written) << r.cli.err;
  EXPECT_DOUBLE_EQ(figure(r, "64 KB host write, one 128 GB/s UCIe connection the bottleneck (ns)"), 551.2);
  EXPECT_DOUBLE_EQ(figure(r, "same, 1 MB (ns)"), 8231.2);
  EXPECT_DOUBLE_EQ(figure(r, "HBM burst time per pseudo-channel (ns)"), 8.0);
  EXPECT_DOUBLE_EQ(figure(r, "UCIe crossing (ns)"), 16.0);
  EXPECT_DOUBLE_EQ(figure(r, "8 PEs eastbound, cube 0 -> cube 1: aggregate fair-share peak (GB/s)"), 160.0);
  EXPECT_DOUBLE_EQ(figure(r, "eastbound flows through cube 1's ucie-W.conn0 (of 8)"), 7.0);
  EXPECT_DOUBLE_EQ(figure(r, "spread of kernel start times over the 128 PEs of SIP 0 (ns)"), 0.0);
  EXPECT_DOUBLE_EQ(figure(r, "512^3 composite GEMM: tiles (32/64/32)"), 2048.0);
  EXPECT_DOUBLE_EQ(figure(r, "torus_2d over 6 SIPs (3 x 2), TCM slots, center root (us; the reference's later guard)"),
                   26.3518);
  EXPECT_DOUBLE_EQ(figure(r, "intra-SIP critical path, 1 SIP (us)"), 15.7258);
  EXPECT_DOUBLE_EQ(figure(r, "32x3072x32 load_ref: composite window (ns)"), 969.0);
  EXPECT_DOUBLE_EQ(figure(r, "32x3072x32 load_ref: kernel window (ns)"), 1740.0);
}

// Where equally short routes tie, the report shows the one taken: the farthest cube, the other SIP, and each
// eastbound flow (seven through cube 1's ucie-W.conn0; PE4's slice sits on the router of ucie-W.conn2).
TEST(Fidelity, TheReportShowsTheRoutesOfTiedPaths) {
  const FidelityRun& r = default_run();
  ASSERT_TRUE(r.written) << r.cli.err;
  const auto& routes = r.results["metrics"]["routes"];
  ASSERT_TRUE(routes.IsObject());
  EXPECT_EQ(routes.MemberCount(), 10u);
  const auto& sip = routes["pe-dma-perf remote_sip"];
  ASSERT_TRUE(sip.IsArray());
  EXPECT_STREQ(sip[0].GetString(), "sip0.cube0.pe0.pe_dma");
  EXPECT_STREQ(sip[sip.Size() - 1].GetString(), "sip1.cube0.hbm_ctrl.pe0");
  unsigned through_conn0 = 0;
  for (unsigned k = 0; k < 8; ++k)
    for (const auto& n : routes[("pe-dma-perf eastbound_8pe, flow " + std::to_string(k)).c_str()].GetArray())
      through_conn0 += std::string(n.GetString()) == "sip0.cube1.ucie-W.conn0";
  EXPECT_EQ(through_conn0, 7u);
  EXPECT_THAT(r.cli.out, HasSubstr("  pe-dma-perf eastbound_8pe, flow 4: sip0.cube0.pe4.pe_dma > r4c0 > r5c0 > "
                                   "ucie-S.conn0 > ucie-S > ucie-S.conn3 > r5c5 > ucie-E.conn3 > ucie-E > "
                                   "cube1.ucie-W > ucie-W.conn2 > r4c0 > hbm_ctrl.pe4\n"));
}

// Each calibrated setting, moved back to kbsim's earlier choice, moves the
// figures it governs outside 5% and fails the run with exit code 6.
TEST(Fidelity, MovingACalibratedSettingFailsTheRun) {
  struct Case {
    const char* set;
    const char* missed;
  } const cases[] = {
      {"cube.components.hbm_ctrl.attrs.efficiency=0.8", "per-PE local HBM bandwidth"},
      {"system.routing=latency", "aggregate fair-share peak"},
      {"cube.pe_template.components.pe_dma.attrs.stage_read_request_channel=false", "composite window"},
  };
  for (const Case& c : cases) {
    FidelityRun r = run_fidelity(std::string("--set ") + c.set);
    EXPECT_EQ(r.cli.code, 6) << c.set;
    EXPECT_THAT(r.cli.err, HasSubstr("FIDELITY: ")) << c.set;
    EXPECT_THAT(r.cli.err, HasSubstr(c.missed)) << c.set;
    EXPECT_THAT(r.cli.out, HasSubstr("bench fidelity failed")) << c.set << ": the table is still shown";
    EXPECT_THAT(r.cli.out, HasSubstr("MISS")) << c.set;
    EXPECT_FALSE(r.written) << c.set << ": a failed run writes nothing";
  }
}

TEST(Fidelity, TheSlowInterSipLinkBreaksTheMeasuredOrder) {
  FidelityRun r = run_fidelity("--set 'system.links.pcie={bw_gbs: 64.0, latency_ns: 150.0}'");
  EXPECT_EQ(r.cli.code, 6);
  EXPECT_THAT(r.cli.err, HasSubstr("remote SIP quicker than the farthest cube"));
}

}  // namespace
}  // namespace kbsim
