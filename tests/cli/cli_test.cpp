// The command line as a user meets it: help, listings, info, exit codes,
// one-line errors, and no results file from a failed run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>

#include "harness.hpp"

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

namespace kbsim {
namespace {

/// The two-switch example topology the traffic bench was calibrated on.
const std::string kTwoSwitch = "--topology " KBSIM_SOURCE_DIR "/examples/topologies/two_switch.yaml";

std::string plugin_dir(const std::string& name) { return std::string(KBSIM_TEST_PLUGIN_DIR) + "/" + name; }

/// Run the traffic bench with extra options; the first endpoint's shortest latency in ns.
double traffic_latency(const std::filesystem::path& out, const std::string& extra) {
  std::string topology = extra.find("--topology") == std::string::npos ? kTwoSwitch + " " : "";
  auto r = test::run_kbsim("run --bench traffic " + topology + extra + " --out " + out.string());
  EXPECT_EQ(r.code, 0) << r.err;
  rapidjson::Document d;
  d.Parse(test::read_file(out / "results.json").c_str());
  if (d.HasParseError() || !d.HasMember("metrics")) return -1.0;
  return d["metrics"]["endpoints"][0]["latency_min_ns"].GetDouble();
}

void expect_one_line_error(const test::CliResult& r) {
  EXPECT_THAT(r.err, StartsWith("kbsim: error: "));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(Cli, ABenchBuildingOneGraphManyTimesElaboratesItOnce) {
  // pe-dma-perf gives every scenario a fresh system of the same graph: one elaboration serves them all, and the
  // systems still report apart (their results are pinned by the golden test).
  auto out = test::temp_dir() / "pe-dma-perf";
  auto r = test::run_kbsim("run --bench pe-dma-perf --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  rapidjson::Document d;
  d.Parse(test::read_file(out / "results.json").c_str());
  ASSERT_FALSE(d.HasParseError());
  EXPECT_GT(d["topology"]["systems"].GetUint(), 10u);
  EXPECT_EQ(d["topology"]["distinct_graphs"].GetUint(), 1u);
  EXPECT_EQ(d["host"]["elaborations"].GetUint(), 1u);
}

TEST(Cli, AnUnknownSubcommandIsNamedWithTheClosest) {
  auto r = test::run_kbsim("prob");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "kbsim: error: unknown subcommand 'prob' (closest: probe) (see 'kbsim --help')\n");
  auto far = test::run_kbsim("frobnicate");
  EXPECT_EQ(far.code, 2);
  EXPECT_THAT(far.err, HasSubstr("unknown subcommand 'frobnicate' (known: run, list, info, topology, version"));
}

TEST(Cli, HelpListsTheSubcommands) {
  auto r = test::run_kbsim("--help");
  EXPECT_EQ(r.code, 0);
  for (const char* sub : {"run", "list", "info", "topology", "version"}) EXPECT_THAT(r.out, HasSubstr(sub));
}

TEST(Cli, EverySubcommandHasHelp) {
  for (const char* sub : {"run", "list", "info", "topology", "version"}) {
    auto r = test::run_kbsim(std::string(sub) + " --help");
    EXPECT_EQ(r.code, 0) << sub;
    EXPECT_THAT(r.out, HasSubstr("--help")) << sub;
  }
  auto r = test::run_kbsim("run --help");
  for (const char* opt : {"--bench", "--param", "--out", "--plugins", "--components", "--topology", "--set"})
    EXPECT_THAT(r.out, HasSubstr(opt));
}

TEST(Cli, NoSubcommandIsAUsageError) {
  auto r = test::run_kbsim("");
  EXPECT_EQ(r.code, 2);
  auto bad = test::run_kbsim("run --no-such-option");
  EXPECT_EQ(bad.code, 2);
  expect_one_line_error(bad);
}

TEST(Cli, ListShowsBuiltinComponentsAndBenches) {
  auto r = test::run_kbsim("list components");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* t : {"forwarding", "mesh_node", "endpoint", "store_forward", "builtin.switch"})
    EXPECT_THAT(r.out, HasSubstr(t));
  auto b = test::run_kbsim("list benches");
  EXPECT_THAT(b.out, HasSubstr("message-mesh"));
  EXPECT_THAT(b.out, HasSubstr("traffic"));
  auto c = test::run_kbsim("list ccl");
  EXPECT_EQ(c.code, 0);
  auto k = test::run_kbsim("list kernels");
  ASSERT_EQ(k.code, 0) << k.err;
  EXPECT_THAT(k.out, HasSubstr("matmul_composite"));
  EXPECT_THAT(k.out, HasSubstr("kbsim_bench_gemm"));
}

TEST(Cli, InfoOnTheMeshNodeShowsParametersPortsAndStatistics) {
  auto r = test::run_kbsim("info builtin.mesh_node");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("component mesh_node"));
  EXPECT_THAT(r.out, HasSubstr("seed"));
  EXPECT_THAT(r.out, HasSubstr("mesh"));
  EXPECT_THAT(r.out, HasSubstr("received"));
  auto f = test::run_kbsim("info forwarding");
  EXPECT_THAT(f.out, HasSubstr("overhead_ns"));
  EXPECT_THAT(f.out, HasSubstr("[ns]"));
  auto b = test::run_kbsim("info message-mesh");
  EXPECT_THAT(b.out, HasSubstr("stop_ns"));
}

TEST(Cli, InfoOnAnUnknownNameSuggests) {
  auto r = test::run_kbsim("info mesh_nod");
  EXPECT_EQ(r.code, 2);
  expect_one_line_error(r);
  EXPECT_THAT(r.err, HasSubstr("closest: builtin.mesh_node, mesh_node"));
}

TEST(Cli, UnknownBenchIsAUsageError) {
  auto r = test::run_kbsim("run --bench message-mash --out " + test::temp_dir().string());
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown bench 'message-mash' (closest: message-mesh)"));
}

TEST(Cli, PluginOfAnotherAbiGivesExitCode4) {
  auto r = test::run_kbsim("list --plugins " + plugin_dir("bad_abi"));
  EXPECT_EQ(r.code, 4);
  expect_one_line_error(r);
  EXPECT_THAT(r.err, HasSubstr("built for kbsim ABI 999"));
}

TEST(Cli, LibraryWithoutEntryPointGivesExitCode4) {
  auto r = test::run_kbsim("list --plugins " + plugin_dir("bad_no_entry"));
  EXPECT_EQ(r.code, 4);
  expect_one_line_error(r);
  EXPECT_THAT(r.err, HasSubstr("not a kbsim plugin"));
}

TEST(Cli, MissingLibraryGivesExitCode4) {
  auto dir = test::temp_dir();
  test::write_file(dir / "c.yaml", "components:\n  vendor.gemm: { library: vendor_gemm, type: gemm }\n");
  auto r = test::run_kbsim("list --components " + (dir / "c.yaml").string());
  EXPECT_EQ(r.code, 4);
  expect_one_line_error(r);
  EXPECT_THAT(r.err, HasSubstr("library 'vendor_gemm' not found (looked in: "));
}

TEST(Cli, MissingPluginDirectoryGivesExitCode4) {
  auto r = test::run_kbsim("list --plugins /nonexistent/plugins");
  EXPECT_EQ(r.code, 4);
  expect_one_line_error(r);
}

TEST(Cli, UnknownImplementationGivesExitCode3WithClosestNames) {
  auto out = test::temp_dir();
  auto r = test::run_kbsim("run --bench traffic " + kTwoSwitch + " --set nodes.sw0.impl=builtin.swtch --out " +
                           out.string());
  EXPECT_EQ(r.code, 3);
  expect_one_line_error(r);
  EXPECT_THAT(r.err, HasSubstr("--set nodes.sw0.impl=builtin.swtch: unknown implementation 'builtin.swtch'"));
  EXPECT_THAT(r.err, HasSubstr("closest: builtin.switch"));
  EXPECT_FALSE(std::filesystem::exists(out / "results.json"));
}

TEST(Cli, BadTopologyNamesFileLineAndColumn) {
  auto dir = test::temp_dir();
  test::write_file(dir / "t.yaml",
                   "nodes:\n  - { id: a, impl: builtin.endpoint }\nedges:\n  - { src: a, dst: a, bandwith_gbs: 3 }\n");
  auto r = test::run_kbsim("topology --topology " + (dir / "t.yaml").string());
  EXPECT_EQ(r.code, 3);
  expect_one_line_error(r);
  EXPECT_THAT(r.err, HasSubstr((dir / "t.yaml").string() + ":4:23: unknown key 'bandwith_gbs' in edge"));
  EXPECT_THAT(r.err, HasSubstr("closest: bandwidth_gbs"));
}

TEST(Cli, MissingPathIsATopologyErrorNamingBothEnds) {
  auto dir = test::temp_dir();
  // mem is reachable from host, but not the other way: host cannot be a destination.
  test::write_file(dir / "t.yaml",
                   "nodes:\n"
                   "  - { id: host, impl: builtin.endpoint }\n"
                   "  - { id: mem, impl: builtin.endpoint, params: { send_to: host } }\n"
                   "edges:\n"
                   "  - { src: host, dst: mem, latency_ns: 1 }\n");
  auto r = test::run_kbsim("run --bench traffic --topology " + (dir / "t.yaml").string() + " --out " +
                           (dir / "out").string());
  EXPECT_EQ(r.code, 3);
  expect_one_line_error(r);
  EXPECT_THAT(r.err, HasSubstr("topology: no path from mem to host (at t=0 ns)"));
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "results.json"));
}

TEST(Cli, BenchThatSubmitsNothingFailsWithNoRequests) {
  auto out = test::temp_dir();
  auto r =
      test::run_kbsim("run --bench traffic " + kTwoSwitch + " --set nodes.host.params.count=0 --out " + out.string());
  EXPECT_EQ(r.code, 6);
  expect_one_line_error(r);
  EXPECT_THAT(r.err, HasSubstr("NO_REQUESTS"));
  EXPECT_FALSE(std::filesystem::exists(out / "results.json"));
}

TEST(Cli, BadBenchParameterIsAConfigError) {
  auto r = test::run_kbsim("run --param x=-1 --out " + test::temp_dir().string());
  EXPECT_EQ(r.code, 3);
  EXPECT_THAT(r.err, HasSubstr("--param x=-1: parameter 'x' must be in 1..4096"));
  auto u = test::run_kbsim("run --param z=1 --out " + test::temp_dir().string());
  EXPECT_EQ(u.code, 3);
  EXPECT_THAT(u.err, HasSubstr("unknown parameter 'z' for bench message-mesh"));
}

TEST(Cli, TopologyDumpIsTheResolvedGraph) {
  auto r = test::run_kbsim("topology --dump " + kTwoSwitch);
  ASSERT_EQ(r.code, 0) << r.err;
  rapidjson::Document d;
  d.Parse(r.out.c_str());
  ASSERT_FALSE(d.HasParseError());
  ASSERT_EQ(d["nodes"].Size(), 4u);
  EXPECT_EQ(d["edges"].Size(), 6u);  // three bidirectional edges
  const auto& sw0 = d["nodes"][1];
  EXPECT_STREQ(sw0["id"].GetString(), "sw0");
  EXPECT_STREQ(sw0["type"].GetString(), "forwarding");
  EXPECT_EQ(sw0["params"]["overhead_ns"].GetDouble(), 5.0);
  const auto& mem = d["nodes"][3];
  EXPECT_EQ(mem["params"]["count"].GetInt64(), 1);          // a default, resolved
  EXPECT_EQ(d["edges"][2]["latency_ns"].GetDouble(), 1.0);  // 10 mm x 0.1 ns/mm
}

TEST(Cli, TopologyShowsHowTheSystemWouldBeSplitOverRanks) {
  // The default system (two SIPs): by SIP over 2 ranks, cutting only the IO chiplets' 0.2 ns links to one SIP.
  auto r = test::run_kbsim("topology --ranks 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("split: 2 ranks (groups kept whole at level 1): 2101 + 2074 nodes, 4 cut links, "
                               "lookahead 0.2 ns"));
  // Two nodes joined by a link without latency cannot be apart.
  const auto dir = test::temp_dir();
  test::write_file(dir / "t.yaml", R"(
nodes:
  - { id: a, impl: builtin.endpoint }
  - { id: b, impl: builtin.endpoint }
edges:
  - { src: a, dst: b, latency_ns: 0, bidir: true }
)");
  auto bad = test::run_kbsim("topology --ranks 2 --topology " + (dir / "t.yaml").string());
  EXPECT_EQ(bad.code, 3);
  EXPECT_THAT(bad.err, HasSubstr("cannot be split over 2 ranks: links without latency (or groups) join its 2 nodes "
                                 "into 1 part"));
}

// Swapping: the same topology with implementation A, then B, of one component,
// both prebuilt: only configuration changes.
TEST(Swap, StoreAndForwardSwitchInsteadOfWormholeChangesLatencyExactly) {
  // Default topology, first packet: host->sw0 64 GB/s (4 ns/flit) + 2 ns, sw0 overhead 5, sw0->sw1 128 GB/s
  // (2 ns/flit) + 1 ns, sw1 overhead 2, sw1->mem 256 GB/s (1 ns/flit) + 1 ns, 16 flits of 256 B.
  // Wormhole: the last flit reaches sw1 at 6 + 15*4 + 3 = 69, then mem at 71.
  // Store-and-forward at sw0: 66 + 5 + 33 = 104 when the last flit reaches sw1, then mem at 106.
  auto out = test::temp_dir();
  auto latency = [&](const std::string& extra) { return traffic_latency(out / std::to_string(extra.size()), extra); };
  EXPECT_EQ(latency(""), 71.0);
  EXPECT_EQ(latency("--set nodes.sw0.impl=custom.store_forward"), 106.0);
}

TEST(Swap, APluginDirectoryChoosesBetweenTwoBuildsOfOneLibrary) {
  auto dir = test::temp_dir();
  test::write_file(dir / "c.yaml", "components:\n  test.delay: { library: test_delay, type: test_delay }\n");
  test::write_file(dir / "t.yaml",
                   "nodes:\n"
                   "  - { id: host, impl: builtin.endpoint, params: { send_to: mem, send_bytes: 1024 } }\n"
                   "  - { id: d, impl: test.delay }\n"
                   "  - { id: mem, impl: builtin.endpoint }\n"
                   "edges:\n"
                   "  - { src: host, dst: d, latency_ns: 1 }\n"
                   "  - { src: d, dst: mem, latency_ns: 1 }\n");
  auto latency = [&](const std::string& variant) {
    return traffic_latency(dir / ("out_" + variant), "--plugins " + plugin_dir("swap_" + variant) + " --components " +
                                                         (dir / "c.yaml").string() + " --topology " +
                                                         (dir / "t.yaml").string());
  };
  // Unlimited bandwidth, 1 ns per link. Variant a holds a message 10 ns; variant b 10 ns + 1 ns per 256 B (4 here).
  EXPECT_EQ(latency("a"), 12.0);
  EXPECT_EQ(latency("b"), 16.0);
}

}  // namespace
}  // namespace kbsim
