// `kbsim probe` as a user runs it: the 14 cases, the sweep, the invariants,
// the figures the reference measured, and its errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kbsim/testing_cli.hpp"

namespace kbsim {
namespace {

using ::testing::HasSubstr;

rapidjson::Document probe_json(const std::string& extra) {
  auto r = testkit::run_kbsim("probe --json " + extra);
  EXPECT_EQ(r.code, 0) << r.err;
  rapidjson::Document d;
  d.Parse(r.out.c_str());
  EXPECT_FALSE(d.HasParseError()) << r.out.substr(0, 200);
  return d;
}

double actual(const rapidjson::Document& d, const std::string& name) {
  for (const auto& c : d["cases"].GetArray())
    if (name == c["name"].GetString()) return c["actual_ns"].GetDouble();
  ADD_FAILURE() << "no case " << name;
  return -1;
}

TEST(Probe, JsonHasFourteenCasesTheSweepAndPassingInvariants) {
  auto d = probe_json("");
  ASSERT_TRUE(d.IsObject());
  const char* names[] = {"h2d-1hop",
                         "h2d-2hop",
                         "h2d-3hop",
                         "h2d-4hop",
                         "d2h-1hop",
                         "d2h-2hop",
                         "d2h-3hop",
                         "d2h-4hop",
                         "pe-local-hbm",
                         "pe-same-half-hbm",
                         "pe-cross-half-hbm",
                         "pe-cross-cube-hbm-best",
                         "pe-cross-cube-hbm-worst",
                         "pe-cross-sip-hbm"};
  ASSERT_EQ(d["cases"].Size(), 14u);
  for (unsigned i = 0; i < 14; ++i) {
    const auto& c = d["cases"][i];
    EXPECT_STREQ(c["name"].GetString(), names[i]);
    EXPECT_TRUE(c["ok"].GetBool());
    EXPECT_EQ(c["bytes"].GetUint64(), 32768u);
    EXPECT_GE(c["actual_ns"].GetDouble(), c["formula_ns"].GetDouble()) << names[i];
    EXPECT_TRUE(c["route"].IsArray());
  }
  EXPECT_EQ(d["sweep"].Size(), 15u);  // 3 cases x 5 sizes, 4 KB .. 1 MB
  ASSERT_GE(d["invariants"].Size(), 11u);
  for (const auto& inv : d["invariants"].GetArray()) EXPECT_TRUE(inv["pass"].GetBool()) << inv["name"].GetString();
  EXPECT_TRUE(d["pass"].GetBool());
  // Same-cube DMA is served without UCIe; the far cube is 3 east + 3 south = 6 crossings.
  EXPECT_EQ(d["cases"][10]["ucie_crossings"].GetUint(), 0u);
  EXPECT_EQ(d["cases"][12]["ucie_crossings"].GetUint(), 6u);
  EXPECT_FALSE(d.HasMember("skipped"));  // the default system has 2 SIPs
}

// ADR-0010 D5: local <= intra-cube <= inter-cube <= inter-SIP. The inter-SIP case
// writes from SIP 0's PE0 to SIP 1's PE0 slice: out over SIP 0's IO chiplet, the
// PCIe links and the switch, in over SIP 1's IO chiplet (no cube-to-cube seam).
TEST(Probe, InterSipCaseCrossesTheSwitchAndIsTheSlowestOfTheOrder) {
  auto d = probe_json("");
  const rapidjson::Value* c = nullptr;
  for (const auto& k : d["cases"].GetArray())
    if (std::string("pe-cross-sip-hbm") == k["name"].GetString()) c = &k;
  ASSERT_NE(c, nullptr);
  EXPECT_STREQ((*c)["category"].GetString(), "pe_dma");
  EXPECT_STREQ((*c)["src"].GetString(), "sip0.cube0.pe0.pe_dma");
  EXPECT_STREQ((*c)["dst"].GetString(), "sip1.cube0.hbm_ctrl.pe0");
  EXPECT_TRUE((*c)["ok"].GetBool());
  std::vector<std::string> forward;
  for (const auto& h : (*c)["route"][0]["hops"].GetArray()) forward.push_back(h["node"].GetString());
  for (const char* n : {"sip0.io0.pcie_ep", "fabric.switch0", "sip1.io0.pcie_ep", "sip1.cube0.r0c0"})
    EXPECT_NE(std::find(forward.begin(), forward.end(), n), forward.end()) << n;
  EXPECT_EQ((*c)["ucie_crossings"].GetUint(), 0u);         // counts cube-to-cube seams only
  EXPECT_DOUBLE_EQ((*c)["bn_bw_gbs"].GetDouble(), 128.0);  // one UCIe connection; the PCIe links are 256
  EXPECT_GT(actual(d, "pe-cross-sip-hbm"), actual(d, "pe-cross-cube-hbm-best"));
  EXPECT_DOUBLE_EQ(actual(d, "pe-cross-sip-hbm"), 769.8);  // as pe-dma-perf's remote_sip at 32 KiB
  bool found = false;
  for (const auto& inv : d["invariants"].GetArray())
    if (std::string("pe dma: local <= intra-cube <= inter-cube <= inter-SIP") == inv["name"].GetString()) {
      found = true;
      EXPECT_TRUE(inv["pass"].GetBool()) << inv["detail"].GetString();
    }
  EXPECT_TRUE(found);
}

// One SIP: "all" skips the inter-SIP case with a line and leaves it out of the
// order; named alone it is a configuration error.
TEST(Probe, OneSipSkipsTheInterSipCase) {
  const std::string one = " --set system.sips.count=1";
  auto text = testkit::run_kbsim("probe" + one);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("  pe-cross-sip-hbm         skipped: needs 2 SIPs, the system has 1\n"));
  EXPECT_THAT(text.out, ::testing::Not(HasSubstr("inter-SIP")));
  auto d = probe_json(one);
  EXPECT_EQ(d["cases"].Size(), 13u);
  ASSERT_TRUE(d.HasMember("skipped"));
  ASSERT_EQ(d["skipped"].Size(), 1u);
  EXPECT_STREQ(d["skipped"][0]["name"].GetString(), "pe-cross-sip-hbm");
  EXPECT_TRUE(d["pass"].GetBool());
  auto named = testkit::run_kbsim("probe --case pe-cross-sip-hbm" + one);
  EXPECT_EQ(named.code, 3);
  EXPECT_THAT(named.err, HasSubstr("probe case pe-cross-sip-hbm needs sip1 cube0 pe0, which this topology lacks"));
}

// The reference's measured figures (FIGURES.md): a host write bottlenecked by
// one 128 GB/s UCIe connection takes drain + HBM commit + path overheads.
// kbsim: overheads pcie_ep 5 + io_ucie 8 + cube UCIe 8 + router 2 = 23 ns,
// wire 0.2 ns, the last burst's 8 ns commit, and the first flit's store-and-
// forward on each link minus what later flits win back on faster links.
TEST(Probe, HostWriteMatchesTheReferenceFigures) {
  auto d64 = probe_json("--case h2d-1hop --bytes 65536");
  EXPECT_DOUBLE_EQ(actual(d64, "h2d-1hop"), 551.2);  // reference 545 ns (+1.1%)
  auto d1m = probe_json("--case h2d-1hop --bytes 1048576");
  EXPECT_DOUBLE_EQ(actual(d1m, "h2d-1hop"), 8231.2);  // reference 8230 ns
  auto d4k = probe_json("--case h2d-1hop --bytes 4096");
  EXPECT_LT(actual(d4k, "h2d-1hop"), 80.0);  // cut-through; store-and-forward would be ~160 ns
  EXPECT_DOUBLE_EQ(d64["cases"][0]["drain_ns"].GetDouble(), 512.0);
  EXPECT_DOUBLE_EQ(d64["cases"][0]["ovhd_ns"].GetDouble(), 23.0);
}

TEST(Probe, LocalHbmGetsTheFullEffectiveBandwidth) {
  // 1 MB from PE0 to its own slice: 8 PCs x 32 GB/s = 256 GB/s on the router link (FIGURES.md).
  auto d = probe_json("--case pe-local-hbm --bytes 1048576");
  const auto& c = d["cases"][0];
  EXPECT_DOUBLE_EQ(c["bn_bw_gbs"].GetDouble(), 256.0);
  EXPECT_GT(c["util_pct"].GetDouble(), 99.0);
  // Derated to 0.8 (refresh, bank conflicts), the link and the bandwidth drop by a fifth.
  auto derated = probe_json("--case pe-local-hbm --bytes 1048576 --set cube.components.hbm_ctrl.attrs.efficiency=0.8");
  EXPECT_DOUBLE_EQ(derated["cases"][0]["bn_bw_gbs"].GetDouble(), 204.8);
  EXPECT_GT(derated["cases"][0]["actual_ns"].GetDouble(), c["actual_ns"].GetDouble() * 1.2);
}

// FIGURES.md: the 4 KB local host write is cut-through, below 80 ns; store-and-forward "would be about 160 ns".
// The store-and-forward transit still runs in every position and moves the figure the expected way.
TEST(Probe, StoreAndForwardTransitsSlowTheLocalWritePastTheCutThroughBound) {
  const std::string sf = "custom.store_forward";
  auto routers = probe_json("--case h2d-1hop --bytes 4096 --set cube.components.router.impl=" + sf);
  EXPECT_DOUBLE_EQ(actual(routers, "h2d-1hop"), 88.2);  // one router (r0c0) now waits for all 16 flits
  std::string every;
  for (const char* c : {"cube.components.router", "cube.components.ucie", "cube.components.ucie_conn",
                        "sip.io_chiplets.0.components.io_noc", "sip.io_chiplets.0.components.io_ucie",
                        "sip.io_chiplets.0.components.conn"})
    every += std::string(" --set ") + c + ".impl=" + sf;
  auto all = probe_json("--case h2d-1hop --bytes 4096" + every);
  EXPECT_GT(actual(all, "h2d-1hop"), 2 * 80.0);
  EXPECT_DOUBLE_EQ(actual(all, "h2d-1hop"), 223.2);
}

TEST(Probe, TextReportShowsColumnsRoutesAndInvariants) {
  auto r = testkit::run_kbsim("probe --case h2d-2hop");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"Actual", "Ovhd", "Drain", "Wire", "Eff.BW", "BN.BW", "Util", "h2d-2hop", "sip0.cube0.ucie-S",
                        "routing: distance", "<BN:128GB/s>", "drain:256ns", "[v] PASS"})
    EXPECT_THAT(r.out, HasSubstr(s));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("d2h-1hop")));
}

TEST(Probe, AFailingInvariantGivesExitCode6) {
  // The IO chiplet moved to the far (south) edge: more "hops" now means closer.
  auto r = testkit::run_kbsim("probe --set 'sip.io_chiplets.0.cube_ports=[{cube: {xy: [0, 3]}, cube_side: S}]'");
  EXPECT_EQ(r.code, 6);
  EXPECT_THAT(r.out, HasSubstr("[x] FAIL h2d latency rises strictly with hops"));
  EXPECT_THAT(r.err,
              HasSubstr("kbsim: error: SELF_CHECK: probe invariant failed: h2d latency rises strictly with hops"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(Probe, BadCaseAndNonAhbmTopologyAreClearErrors) {
  auto r = testkit::run_kbsim("probe --case h2d-2hops");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown case 'h2d-2hops'"));
  EXPECT_THAT(r.err, HasSubstr("closest: h2d-2hop"));
  auto n = testkit::run_kbsim("probe --case 1");  // a text option stays text, even when it looks like a number
  EXPECT_EQ(n.code, 2);
  EXPECT_THAT(n.err, HasSubstr("unknown case '1'"));
  auto t = testkit::run_kbsim("probe --topology " KBSIM_SOURCE_DIR "/examples/topologies/two_switch.yaml");
  EXPECT_EQ(t.code, 3);
  EXPECT_THAT(t.err, HasSubstr("does not publish the AHBM attribute"));
}

TEST(Probe, IsDeterministic) {
  auto a = testkit::run_kbsim("probe --json");
  auto b = testkit::run_kbsim("probe --json");
  ASSERT_EQ(a.code, 0);
  EXPECT_EQ(a.out, b.out);
}

}  // namespace
}  // namespace kbsim

namespace kbsim {
namespace {

TEST(Probe, AComponentThatCannotServeTheRequestIsASimulationError) {
  // A plain forwarder in place of the HBM controller: the request's flits end there.
  auto r = testkit::run_kbsim("probe --case h2d-1hop --set 'cube.components.hbm_ctrl={impl: builtin.forwarding}'");
  EXPECT_EQ(r.code, 5);
  EXPECT_THAT(r.err, ::testing::HasSubstr("ns: sip0.cube0.hbm_ctrl.pe0: flit arrived off its route"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

}  // namespace
}  // namespace kbsim
