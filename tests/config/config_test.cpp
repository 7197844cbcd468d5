// Topology and parameter validation: every error names file:line:column (or the
// --set that caused it) and the offending key, with the closest known name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"
#include "plugin/params_resolve.hpp"

using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace kbsim {
namespace {

using test::config_error;
using test::parse_error;

class BuildConfig : public ::testing::Test {
 protected:
  /// Parse and elaborate, expecting a ConfigError from either step.
  static std::string build_error(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
    return config_error([&] {
      Graph g = kbsim::test::parse_topology(yaml, "t.yaml", overrides);
      core::Simulation sim(core::elaborate(g, test::shared_registry()), test::shared_registry());
    });
  }
};

// A valid base: line numbers below refer to this text.
//   1 nodes:
//   2   - { id: host, impl: builtin.endpoint, params: { send_to: mem, send_bytes: 4096 } }
//   3   - { id: sw0, impl: builtin.forwarding, params: { overhead_ns: 5 } }
//   4   - { id: mem, impl: builtin.endpoint }
//   5 edges:
//   6   - { src: host, dst: sw0, bandwidth_gbs: 64, latency_ns: 2 }
//   7   - { src: sw0, dst: mem, bandwidth_gbs: 64, latency_ns: 2 }
const char* kBase =
    "nodes:\n"
    "  - { id: host, impl: builtin.endpoint, params: { send_to: mem, send_bytes: 4096 } }\n"
    "  - { id: sw0, impl: builtin.forwarding, params: { overhead_ns: 5 } }\n"
    "  - { id: mem, impl: builtin.endpoint }\n"
    "edges:\n"
    "  - { src: host, dst: sw0, bandwidth_gbs: 64, latency_ns: 2 }\n"
    "  - { src: sw0, dst: mem, bandwidth_gbs: 64, latency_ns: 2 }\n";

/// kBase with edge 0 (line 6) replaced by `edge`.
std::string with_edge(const std::string& edge) {
  std::string s = kBase;
  const std::string old = "  - { src: host, dst: sw0, bandwidth_gbs: 64, latency_ns: 2 }\n";
  s.replace(s.find(old), old.size(), edge + "\n");
  return s;
}

TEST(TopologyConfig, TheBaseTopologyIsValid) {
  Graph g = kbsim::test::parse_topology(kBase, "t.yaml", {});
  ASSERT_EQ(g.nodes.size(), 3u);
  ASSERT_EQ(g.edges.size(), 2u);
  EXPECT_EQ(g.nodes[1].id, "sw0");
  EXPECT_EQ(g.nodes[1].impl, "builtin.forwarding");
  EXPECT_EQ(g.edges[0].bandwidth_gbs, 64.0);
  EXPECT_EQ(g.edges[0].latency_ns, 2.0);
  EXPECT_EQ(g.edges[0].flit_bytes, 256u);
  EXPECT_EQ(g.edges[0].kind, "link");
  EXPECT_EQ(g.edges[0].origin, "t.yaml:6:5");
  EXPECT_EQ(g.source, "t.yaml");
}

// --- structure and keys ---------------------------------------------------------

TEST(TopologyConfig, UnknownTopLevelKey) {
  EXPECT_EQ(parse_error("nodes: []\nedge: []\n"), "t.yaml:2:1: unknown key 'edge' in topology (closest: edges)");
}

TEST(TopologyConfig, UnknownEdgeKeyNamesLineColumnAndClosestKey) {
  EXPECT_EQ(parse_error(with_edge("  - { src: host, dst: sw0, bandwidth: 64, latency_ns: 2 }")),
            "t.yaml:6:28: unknown key 'bandwidth' in edge (closest: bandwidth_gbs)");
}

TEST(TopologyConfig, UnknownNodeKey) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("params: { overhead_ns"), 7, "param:");
  EXPECT_EQ(parse_error(yaml), "t.yaml:3:42: unknown key 'param' in node (closest: params)");
}

TEST(TopologyConfig, UnknownDefaultsKey) {
  EXPECT_EQ(parse_error(std::string("defaults: { latency: 1 }\n") + kBase),
            "t.yaml:1:13: unknown key 'latency' in defaults (closest: latency_ns)");
}

TEST(TopologyConfig, NodesMustBeAList) {
  EXPECT_THAT(parse_error("nodes: { a: 1 }\n"), StartsWith("t.yaml:1:1: 'nodes' must be a list"));
  EXPECT_THAT(parse_error("edges: []\n"), HasSubstr("'nodes' must be a list"));
}

TEST(TopologyConfig, NodeNeedsIdAndImpl) {
  EXPECT_EQ(parse_error("nodes:\n  - { id: a }\n"), "t.yaml:2:5: a node needs 'id' and 'impl'");
}

TEST(TopologyConfig, EdgeNeedsSrcAndDst) {
  EXPECT_EQ(parse_error(with_edge("  - { src: host, latency_ns: 2 }")), "t.yaml:6:5: an edge needs 'src' and 'dst'");
}

// --- values and units ---------------------------------------------------------------

TEST(TopologyConfig, WrongTypeForBandwidth) {
  EXPECT_EQ(parse_error(with_edge("  - { src: host, dst: sw0, bandwidth_gbs: fast, latency_ns: 2 }")),
            "t.yaml:6:43: 'bandwidth_gbs' must be a number, got 'fast'");
}

TEST(TopologyConfig, QuotedNumberIsAStringNotANumber) {
  EXPECT_EQ(parse_error(with_edge("  - { src: host, dst: sw0, bandwidth_gbs: \"64\", latency_ns: 2 }")),
            "t.yaml:6:43: 'bandwidth_gbs' must be a number, got '64'");
}

TEST(TopologyConfig, NegativeBandwidth) {
  EXPECT_EQ(parse_error(with_edge("  - { src: host, dst: sw0, bandwidth_gbs: -64, latency_ns: 2 }")),
            "t.yaml:6:43: 'bandwidth_gbs' must be a finite number >= 0, got -64");
}

TEST(TopologyConfig, NegativeOrInfiniteLatency) {
  EXPECT_EQ(parse_error(with_edge("  - { src: host, dst: sw0, latency_ns: -1 }")),
            "t.yaml:6:40: 'latency_ns' must be a finite number >= 0, got -1");
  EXPECT_EQ(parse_error(with_edge("  - { src: host, dst: sw0, latency_ns: .inf }")),
            "t.yaml:6:40: 'latency_ns' must be a number, got '.inf'");
}

TEST(TopologyConfig, NumberGivenAsAMap) {
  EXPECT_EQ(parse_error(with_edge("  - { src: host, dst: sw0, latency_ns: { ns: 2 } }")),
            "t.yaml:6:40: 'latency_ns' must be a number");
}

TEST(TopologyConfig, FlitBytesMustBeAWholePositiveNumber) {
  EXPECT_EQ(parse_error(with_edge("  - { src: host, dst: sw0, flit_bytes: 0 }")),
            "t.yaml:6:40: 'flit_bytes' must be a whole number of bytes >= 1");
  EXPECT_EQ(parse_error(with_edge("  - { src: host, dst: sw0, flit_bytes: 64.5 }")),
            "t.yaml:6:40: 'flit_bytes' must be a whole number of bytes >= 1");
}

TEST(TopologyConfig, LatencyAndDistanceBothGiven) {
  EXPECT_EQ(parse_error(with_edge("  - { src: host, dst: sw0, latency_ns: 2, distance_mm: 10, ns_per_mm: 0.1 }")),
            "t.yaml:6:56: give latency_ns or distance_mm, not both");
}

TEST(TopologyConfig, DistanceWithoutNsPerMm) {
  EXPECT_EQ(parse_error(with_edge("  - { src: host, dst: sw0, distance_mm: 10 }")),
            "t.yaml:6:41: distance_mm needs ns_per_mm (on the edge or in defaults)");
}

TEST(TopologyConfig, DistanceWithNsPerMmOnTheEdgeOrInDefaults) {
  Graph g = kbsim::test::parse_topology(with_edge("  - { src: host, dst: sw0, distance_mm: 10, ns_per_mm: 0.25 }"),
                                        "t.yaml", {});
  EXPECT_DOUBLE_EQ(g.edges[0].latency_ns, 2.5);
  Graph d = kbsim::test::parse_topology(
      std::string("defaults: { ns_per_mm: 0.5 }\n") + with_edge("  - { src: host, dst: sw0, distance_mm: 10 }"),
      "t.yaml", {});
  EXPECT_DOUBLE_EQ(d.edges[0].latency_ns, 5.0);
  EXPECT_DOUBLE_EQ(d.edges[1].latency_ns, 2.0) << "latency_ns on the edge is unaffected by ns_per_mm";
}

TEST(TopologyConfig, DefaultsApplyToEveryEdgeUnlessOverridden) {
  Graph g = kbsim::test::parse_topology(
      "defaults: { bandwidth_gbs: 32, latency_ns: 3, flit_bytes: 128, kind: noc }\n"
      "nodes:\n  - { id: a, impl: x }\n  - { id: b, impl: x }\n"
      "edges:\n  - { src: a, dst: b }\n  - { src: b, dst: a, bandwidth_gbs: 8, kind: ucie, bidir: true }\n",
      "t.yaml", {});
  ASSERT_EQ(g.edges.size(), 3u);
  EXPECT_EQ(g.edges[0].bandwidth_gbs, 32.0);
  EXPECT_EQ(g.edges[0].latency_ns, 3.0);
  EXPECT_EQ(g.edges[0].flit_bytes, 128u);
  EXPECT_EQ(g.edges[0].kind, "noc");
  EXPECT_EQ(g.edges[1].bandwidth_gbs, 8.0);
  EXPECT_EQ(g.edges[1].kind, "ucie");
  EXPECT_EQ(g.edges[2].src, "a") << "bidir adds the reverse edge right after";
  EXPECT_EQ(g.edges[2].dst, "b");
  EXPECT_EQ(g.edges[2].bandwidth_gbs, 8.0);
}

TEST(TopologyConfig, BidirMustBeABool) {
  EXPECT_EQ(parse_error(with_edge("  - { src: host, dst: sw0, bidir: yes }")),
            "t.yaml:6:35: 'bidir' must be true or false");
}

// --- graph consistency ---------------------------------------------------------------

TEST(TopologyConfig, DuplicateNodeIdNamesBothPlaces) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("id: mem"), 7, "id: sw0");
  std::string e = parse_error(yaml);
  EXPECT_THAT(e, StartsWith("t.yaml:4:"));
  EXPECT_THAT(e, HasSubstr(": duplicate node id 'sw0' (first at t.yaml:3:"));
}

TEST(TopologyConfig, DanglingEdgeNamesTheUnknownNode) {
  EXPECT_EQ(parse_error(with_edge("  - { src: host, dst: sw1, latency_ns: 2 }")),
            "t.yaml:6:5: edge host -> sw1 names unknown node 'sw1' (closest: sw0)");
  EXPECT_EQ(parse_error(with_edge("  - { src: hots, dst: sw0, latency_ns: 2 }")),
            "t.yaml:6:5: edge hots -> sw0 names unknown node 'hots' (closest: host)");
}

TEST(TopologyConfig, YamlSyntaxErrorHasAPosition) {
  std::string e = parse_error("nodes:\n  - { id: a, impl: x\nedges: []\n");
  EXPECT_THAT(e, testing::MatchesRegex("t\\.yaml:[0-9]+:[0-9]+: YAML syntax error: .+"));
  EXPECT_THAT(parse_error("nodes: [\n"), StartsWith("t.yaml:2:1: YAML syntax error: "));
  EXPECT_THAT(parse_error("nodes:\n  - id: a\n   impl: x\n"), StartsWith("t.yaml:3:"));
}

TEST(TopologyConfig, LoadingAMissingFileIsAConfigError) {
  EXPECT_EQ(config_error([] { kbsim::test::load_topology("/nonexistent/kbsim/t.yaml", {}); }),
            "/nonexistent/kbsim/t.yaml: cannot open file");
}

// --- elaboration: implementations, parameters, ports ---------------------------------------

TEST_F(BuildConfig, TheBaseTopologyBuilds) {
  Graph g = kbsim::test::parse_topology(kBase, "t.yaml", {});
  EXPECT_NO_THROW({ core::Simulation sim(core::elaborate(g, test::shared_registry()), test::shared_registry()); });
}

TEST_F(BuildConfig, UnknownImplementationSuggests) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("builtin.forwarding"), 18, "builtin.forwardin");
  EXPECT_THAT(build_error(yaml),
              StartsWith("t.yaml:3:22: unknown implementation 'builtin.forwardin' (closest: builtin.forwarding"));
}

TEST_F(BuildConfig, UnknownParameterNamesTheImplAndTheClosestParameter) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("overhead_ns: 5"), 14, "overhead: 5");
  // ... and which type the implementation name maps to, where (a parameter it lacks may be the mapping's doing).
  EXPECT_THAT(build_error(yaml),
              StartsWith("t.yaml:3:62: unknown parameter 'overhead' for builtin.forwarding (closest: overhead_ns) "
                         "(builtin.forwarding is component type 'forwarding' of library kbsim_forwarding, as "));
}

TEST_F(BuildConfig, WrongParameterType) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("overhead_ns: 5"), 14, "overhead_ns: slow");
  EXPECT_EQ(build_error(yaml), "t.yaml:3:65: parameter 'overhead_ns' of builtin.forwarding must be float, got 'slow'");
  std::string b = kBase;
  b.replace(b.find("send_bytes: 4096"), 16, "send_bytes: 4096.5");
  EXPECT_EQ(build_error(b), "t.yaml:2:77: parameter 'send_bytes' of builtin.endpoint must be int, got '4096.5'");
}

TEST_F(BuildConfig, ParameterRejectedByTheComponentNamesWhereItCameFrom) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("overhead_ns: 5"), 14, "overhead_ns: -5");
  EXPECT_EQ(build_error(yaml), "t.yaml:3:65: parameter 'overhead_ns' must be >= 0");
}

TEST_F(BuildConfig, PortKindTheComponentDoesNotAccept) {
  // mesh_node only has 'mesh' ports.
  const char* yaml =
      "nodes:\n"
      "  - { id: a, impl: builtin.mesh_node }\n"
      "  - { id: b, impl: builtin.mesh_node }\n"
      "edges:\n"
      "  - { src: a, dst: b, latency_ns: 1, kind: mesh }\n"
      "  - { src: b, dst: a, latency_ns: 1, kind: noc }\n";
  // The error names the components.yaml entry that chose the type without the port.
  EXPECT_THAT(
      build_error(yaml),
      testing::MatchesRegex("t\\.yaml:6:5: edge b \\(builtin\\.mesh_node\\) -> a \\(builtin\\.mesh_node\\) of "
                            "kind 'noc': b has no 'noc' port \\(known: mesh\\) \\(builtin\\.mesh_node is "
                            "component type 'mesh_node' of library kbsim_mesh_node, as .*/components\\.yaml:[0-9]+:3 "
                            "maps it\\)"));
  Graph fixed = kbsim::test::parse_topology(yaml, "t.yaml", {"edges.1.kind=mesh"});
  EXPECT_NO_THROW({ core::Simulation sim(core::elaborate(fixed, test::shared_registry()), test::shared_registry()); })
      << "fixed by an override";
}

TEST_F(BuildConfig, AnAhbmBlockWiredWithTheWrongEdgeKindNamesBothEnds) {
  // hbm_ctrl declares router_to_hbm and hbm_to_router only; a pe_data edge to it is refused.
  const char* yaml =
      "nodes:\n"
      "  - { id: r, impl: builtin.forwarding }\n"
      "  - { id: h, impl: builtin.hbm_ctrl }\n"
      "edges:\n"
      "  - { src: r, dst: h, latency_ns: 1, kind: pe_data }\n";
  EXPECT_THAT(build_error(yaml),
              testing::StartsWith("t.yaml:5:5: edge r (builtin.forwarding) -> h (builtin.hbm_ctrl) of kind 'pe_data': "
                                  "h has no 'pe_data' port (known: router_to_hbm, hbm_to_router) (builtin.hbm_ctrl is "
                                  "component type 'hbm_ctrl' of library kbsim_hbm_ctrl, as "));
}

TEST_F(BuildConfig, ANodeReferenceToAMissingNodeNamesTheParameter) {
  const char* yaml =
      "nodes:\n"
      "  - { id: d, impl: builtin.pe_dma, params: { mmu: nowhere } }\n";
  EXPECT_EQ(build_error(yaml),
            "t.yaml:2:51: parameter 'mmu' of d (builtin.pe_dma) names unknown node 'nowhere' (known: d)");
}

TEST_F(BuildConfig, DuplicateIdInAGraphBuiltByABenchIsCaughtAtElaboration) {
  // Benches may build graphs without the YAML loader; the core checks again.
  Graph g;
  g.nodes.push_back({"a", "builtin.endpoint", {}, "gen:1"});
  g.nodes.push_back({"a", "builtin.endpoint", {}, "gen:2"});
  EXPECT_EQ(
      config_error([&] { core::Simulation sim(core::elaborate(g, test::shared_registry()), test::shared_registry()); }),
      "gen:2: duplicate node id 'a' (first at gen:1)");
  Graph d;
  d.nodes.push_back({"a", "builtin.endpoint", {}, "gen:1"});
  d.edges.push_back({"a", "b", 0.0, 1.0, 256, "link", "gen:3"});
  EXPECT_EQ(
      config_error([&] { core::Simulation sim(core::elaborate(d, test::shared_registry()), test::shared_registry()); }),
      "gen:3: edge to unknown node 'b'");
}

// --- --set overrides ---------------------------------------------------------------------

TEST(Overrides, ChangeAnEdgeValueByIndex) {
  Graph g = kbsim::test::parse_topology(kBase, "t.yaml", {"edges.0.bandwidth_gbs=32"});
  EXPECT_EQ(g.edges[0].bandwidth_gbs, 32.0);
  EXPECT_EQ(g.edges[1].bandwidth_gbs, 64.0);
}

TEST_F(BuildConfig, OverriddenBandwidthChangesTiming) {
  auto run = [&](const std::vector<std::string>& o) {
    auto sys = test::build_system(test::shared_registry(), kBase, o);
    sys->run();
    sys->finish();
    return ns_to_ticks(sys->stat("mem", "latency_min_ns").value);
  };
  // 64 GB/s on both links: head at sw0 at 6, leaves at 11, at mem at 17; 15 more flits at 4 ns: 77 ns.
  EXPECT_EQ(run({}), 77000u);
  // 32 GB/s into sw0: flit k at sw0 at 8(k+1)+2 = 10+8k. Head leaves at 15, at mem at 21;
  // body flits pass straight through: the tail reaches sw0 at 130, mem at 136 ns.
  EXPECT_EQ(run({"edges.0.bandwidth_gbs=32"}), 136000u);
}

TEST(Overrides, AddressANodeById) {
  Graph g = kbsim::test::parse_topology(kBase, "t.yaml", {"nodes.sw0.impl=custom.store_forward"});
  EXPECT_EQ(g.nodes[1].impl, "custom.store_forward");
  EXPECT_EQ(g.nodes[1].origin, "--set nodes.sw0.impl=custom.store_forward");
}

TEST(Overrides, SetAParameter) {
  Graph g = kbsim::test::parse_topology(kBase, "t.yaml", {"nodes.sw0.params.overhead_ns=7.5"});
  ASSERT_EQ(g.nodes[1].params.size(), 1u);
  EXPECT_EQ(g.nodes[1].params[0].name, "overhead_ns");
  EXPECT_EQ(std::get<double>(g.nodes[1].params[0].value), 7.5);
  EXPECT_EQ(g.nodes[1].params[0].origin, "--set nodes.sw0.params.overhead_ns=7.5");
}

TEST(Overrides, AddAKeyThatWasNotInTheFile) {
  Graph g = kbsim::test::parse_topology(kBase, "t.yaml", {"edges.1.flit_bytes=64", "nodes.host.params.count=3"});
  EXPECT_EQ(g.edges[1].flit_bytes, 64u);
  EXPECT_EQ(g.nodes[0].params.size(), 3u);
}

TEST(Overrides, LaterOverridesWin) {
  Graph g = kbsim::test::parse_topology(kBase, "t.yaml", {"edges.0.latency_ns=5", "edges.0.latency_ns=6"});
  EXPECT_EQ(g.edges[0].latency_ns, 6.0);
}

TEST_F(BuildConfig, OverriddenParameterChangesTimingAndRemembersItsOrigin) {
  auto sys = test::build_system(test::shared_registry(), kBase, {"nodes.sw0.params.overhead_ns=7"});
  const auto& sw0 = sys->simulation().elaboration()->nodes[1];
  EXPECT_EQ(sw0.params.get_float("overhead_ns"), 7.0);
  EXPECT_EQ(sw0.params.origin("overhead_ns"), "--set nodes.sw0.params.overhead_ns=7");
  EXPECT_EQ(sys->simulation().elaboration()->nodes[2].params.origin("count"), "default");
  sys->run();
  sys->finish();
  EXPECT_EQ(ns_to_ticks(sys->stat("mem", "latency_min_ns").value), 79000u);  // 77 + 2 ns more overhead
}

TEST(Overrides, BadPathSuggestsTheClosestKey) {
  EXPECT_EQ(parse_error(kBase, {"edgez.0.bandwidth_gbs=1"}),
            "--set edgez.0.bandwidth_gbs=1: no key 'edgez' (closest: edges)");
  EXPECT_EQ(parse_error(kBase, {"nodes.sw0.parms.overhead_ns=1"}),
            "--set nodes.sw0.parms.overhead_ns=1: no key 'nodes.sw0.parms' (closest: params)");
}

TEST(Overrides, MisspelledLastKeyIsReportedAsComingFromTheOverride) {
  EXPECT_EQ(parse_error(kBase, {"edges.0.bandwith_gbs=1"}),
            "--set edges.0.bandwith_gbs=1: unknown key 'bandwith_gbs' in edge (closest: bandwidth_gbs)");
  EXPECT_EQ(parse_error(kBase, {"nodes.sw0.imp=custom.store_forward"}),
            "--set nodes.sw0.imp=custom.store_forward: unknown key 'imp' in node (closest: impl, id)");
}

TEST(Overrides, ItemThatMatchesNothing) {
  EXPECT_EQ(parse_error(kBase, {"nodes.sw9.impl=x"}),
            "--set nodes.sw9.impl=x: 'nodes.sw9' matches no item (by index or id)");
  EXPECT_EQ(parse_error(kBase, {"edges.2.latency_ns=1"}),
            "--set edges.2.latency_ns=1: 'edges.2' matches no item (by index or id)");
}

TEST(Overrides, PathThroughAValue) {
  EXPECT_EQ(parse_error(kBase, {"edges.0.latency_ns.x=1"}),
            "--set edges.0.latency_ns.x=1: 'edges.0.latency_ns' is a value, not a map or list");
}

TEST(Overrides, MissingEquals) {
  EXPECT_EQ(parse_error(kBase, {"edges.0.latency_ns"}), "--set edges.0.latency_ns: expected key=value");
  EXPECT_EQ(parse_error(kBase, {"=1"}), "--set =1: expected key=value");
}

TEST(Overrides, BadValueIsReportedAsComingFromTheOverrideNotTheFile) {
  EXPECT_EQ(parse_error(kBase, {"edges.0.bandwidth_gbs=fast"}),
            "--set edges.0.bandwidth_gbs=fast: 'bandwidth_gbs' must be a number, got 'fast'");
  EXPECT_EQ(parse_error(kBase, {"edges.1.bandwidth_gbs=-1"}),
            "--set edges.1.bandwidth_gbs=-1: 'bandwidth_gbs' must be a finite number >= 0, got -1");
  EXPECT_EQ(parse_error(kBase, {"edges.0.distance_mm=3"}),
            "--set edges.0.distance_mm=3: give latency_ns or distance_mm, not both");
}

TEST(Overrides, ErrorsElsewhereStillPointIntoTheFile) {
  std::string yaml = with_edge("  - { src: host, dst: sw0, bandwidth_gbs: fast, latency_ns: 2 }");
  EXPECT_EQ(parse_error(yaml, {"edges.1.latency_ns=3"}), "t.yaml:6:43: 'bandwidth_gbs' must be a number, got 'fast'");
  EXPECT_EQ(parse_error(yaml, {"edges.0.latency_ns=3"}), "t.yaml:6:43: 'bandwidth_gbs' must be a number, got 'fast'")
      << "an override of a sibling key does not take over the item";
}

TEST(Overrides, WholeItemReplacedByAnOverride) {
  Graph g = kbsim::test::parse_topology(kBase, "t.yaml", {"edges.0={src: host, dst: sw0, latency_ns: 9}"});
  EXPECT_EQ(g.edges[0].latency_ns, 9.0);
  EXPECT_EQ(g.edges[0].bandwidth_gbs, 0.0);
  EXPECT_EQ(
      parse_error(kBase, {"edges.0={src: host, dst: sw0, bandwidth: 1}"}),
      "--set edges.0={src: host, dst: sw0, bandwidth: 1}: unknown key 'bandwidth' in edge (closest: bandwidth_gbs)");
}

TEST(Overrides, UnparsableValue) {
  EXPECT_THAT(parse_error(kBase, {"edges.0.latency_ns=[1"}),
              StartsWith("--set edges.0.latency_ns=[1: cannot parse the value: "));
}

TEST_F(BuildConfig, OverrideWithABadParameterIsReportedAsComingFromTheOverride) {
  EXPECT_EQ(build_error(kBase, {"nodes.sw0.params.overhead_ns=slow"}),
            "--set nodes.sw0.params.overhead_ns=slow: parameter 'overhead_ns' of builtin.forwarding must be float, got "
            "'slow'");
  EXPECT_EQ(build_error(kBase, {"nodes.sw0.params.overhead_ns=-1"}),
            "--set nodes.sw0.params.overhead_ns=-1: parameter 'overhead_ns' must be >= 0");
  EXPECT_THAT(build_error(kBase, {"nodes.sw0.params.overhed_ns=1"}),
              StartsWith("--set nodes.sw0.params.overhed_ns=1: unknown parameter 'overhed_ns' for builtin.forwarding "
                         "(closest: overhead_ns) (builtin.forwarding is component type 'forwarding' of "));
  EXPECT_EQ(build_error(kBase, {"nodes.sw0.impl=custom.store_fwd"}),
            "--set nodes.sw0.impl=custom.store_fwd: unknown implementation 'custom.store_fwd' (closest: "
            "custom.store_forward, custom.systolic_gemm)");
}

TEST_F(BuildConfig, SwappedImplementationKeepsTheParameters) {
  auto sys = test::build_system(test::shared_registry(), kBase, {"nodes.sw0.impl=custom.store_forward"});
  EXPECT_EQ(sys->simulation().elaboration()->nodes[1].type->info.type, "store_forward");
  EXPECT_EQ(sys->simulation().elaboration()->nodes[1].params.get_float("overhead_ns"), 5.0);
  EXPECT_EQ(sys->simulation().elaboration()->nodes[1].params.origin("overhead_ns"), "test.yaml:3:65");
}

// --- parse_scalar and resolve_params ----------------------------------------------------

TEST(ParseScalar, TypedValuesFromText) {
  EXPECT_EQ(kbsim::parse_scalar("true"), ParamValue(true));
  EXPECT_EQ(kbsim::parse_scalar("false"), ParamValue(false));
  EXPECT_EQ(kbsim::parse_scalar("42"), ParamValue(std::int64_t{42}));
  EXPECT_EQ(kbsim::parse_scalar("-7"), ParamValue(std::int64_t{-7}));
  EXPECT_EQ(kbsim::parse_scalar("0x10"), ParamValue(std::int64_t{16}));
  EXPECT_EQ(kbsim::parse_scalar("1.5"), ParamValue(1.5));
  EXPECT_EQ(kbsim::parse_scalar("1e3"), ParamValue(1000.0));
  EXPECT_EQ(kbsim::parse_scalar("4096.0"), ParamValue(4096.0)) << "a decimal point makes a real number";
  EXPECT_EQ(kbsim::parse_scalar("abc"), ParamValue(std::string("abc")));
  EXPECT_EQ(kbsim::parse_scalar("12abc"), ParamValue(std::string("12abc")));
  EXPECT_EQ(kbsim::parse_scalar("True"), ParamValue(std::string("True")));
  EXPECT_EQ(kbsim::parse_scalar(""), ParamValue(std::string("")));
}

std::vector<ParamSpec> specs() {
  return {param_int("count", 3, "how many"), param_float("delay_ns", 1.5, "how long"),
          param_bool("on", false, "switch"), required(param_string("target", "", "where to send"))};
}

TEST(ResolveParams, DefaultsFillWhatIsNotGiven) {
  Params p = core::resolve_params(specs(), {{"target", std::string("mem"), "t.yaml:1:1"}}, "x.impl", "t.yaml:1:1");
  EXPECT_EQ(p.get_int("count"), 3);
  EXPECT_EQ(p.get_float("delay_ns"), 1.5);
  EXPECT_FALSE(p.get_bool("on"));
  EXPECT_EQ(p.get_string("target"), "mem");
  EXPECT_EQ(p.origin("count"), "default");
  EXPECT_EQ(p.origin("target"), "t.yaml:1:1");
  EXPECT_EQ(p.entries().size(), 4u);
}

TEST(ResolveParams, IntIsAcceptedForAFloat) {
  Params p = core::resolve_params(specs(), {{"target", std::string("m"), "o"}, {"delay_ns", std::int64_t{2}, "o"}},
                                  "x.impl", "o");
  EXPECT_EQ(p.get_float("delay_ns"), 2.0);
  EXPECT_TRUE(std::holds_alternative<double>(p.entries()[1].value)) << "stored as the declared type";
}

TEST(ResolveParams, FloatIsAcceptedForAnIntOnlyIfIntegral) {
  Params p = core::resolve_params(specs(), {{"target", std::string("m"), "o"}, {"count", 4.0, "o"}}, "x.impl", "o");
  EXPECT_EQ(p.get_int("count"), 4);
  EXPECT_EQ(
      config_error([] {
        core::resolve_params(specs(), {{"target", std::string("m"), "o"}, {"count", 4.5, "p:2:3"}}, "x.impl", "o");
      }),
      "p:2:3: parameter 'count' of x.impl must be int, got '4.5'");
}

TEST(ResolveParams, OtherTypeMismatches) {
  EXPECT_EQ(config_error([] {
              core::resolve_params(specs(), {{"target", std::string("m"), "o"}, {"on", std::string("yes"), "p"}},
                                   "x.impl", "o");
            }),
            "p: parameter 'on' of x.impl must be bool, got 'yes'");
  EXPECT_EQ(config_error([] {
              core::resolve_params(specs(), {{"target", std::int64_t{5}, "p"}}, "x.impl", "o");
            }),
            "p: parameter 'target' of x.impl must be string, got '5'");
  EXPECT_EQ(
      config_error([] {
        core::resolve_params(specs(), {{"target", std::string("m"), "o"}, {"delay_ns", true, "p"}}, "x.impl", "o");
      }),
      "p: parameter 'delay_ns' of x.impl must be float, got 'true'");
}

TEST(ResolveParams, RequiredParameterMissing) {
  EXPECT_EQ(config_error([] { core::resolve_params(specs(), {}, "x.impl", "t.yaml:4:9"); }),
            "t.yaml:4:9: x.impl needs parameter 'target' (where to send)");
}

TEST(ResolveParams, UnknownParameterSuggests) {
  EXPECT_EQ(config_error([] {
              core::resolve_params(specs(), {{"cout", std::int64_t{1}, "p:1:2"}}, "x.impl", "o");
            }),
            "p:1:2: unknown parameter 'cout' for x.impl (closest: count)");
}

TEST(ResolveParams, ParameterGivenTwice) {
  EXPECT_EQ(config_error([] {
              core::resolve_params(specs(), {{"count", std::int64_t{1}, "p:1:1"}, {"count", std::int64_t{2}, "p:2:1"}},
                                   "x.impl", "o");
            }),
            "p:2:1: parameter 'count' given twice (first at p:1:1)");
}

// Handles declared once: listed as specs, read back in their own types, named in checks.
constexpr IntParam kCount{"count", 3, "how many"};
constexpr FloatParam kDelay{"delay_ns", 1.5, "how long"};
constexpr BoolParam kOn{"on", false, "switch"};
constexpr StringParam kTarget{"target", "", "where to send", true};
constexpr NodeParam kPeer{"peer", "", "a collaborator"};

TEST(ResolveParams, HandlesDeclareAndReadAParameterByOneName) {
  const std::vector<ParamSpec> declared = {kCount, kDelay, kOn, kTarget, kPeer};
  ASSERT_EQ(declared.size(), 5u);
  EXPECT_EQ(declared[3].name, "target");
  EXPECT_TRUE(declared[3].required);
  EXPECT_EQ(declared[4].type, ParamType::kNode);
  EXPECT_EQ(declared[1].default_value, ParamValue(1.5));
  Params p = core::resolve_params(
      declared, {{"target", std::string("m"), "t.yaml:2:3"}, {"count", std::int64_t{7}, "o"}}, "x.impl", "o");
  EXPECT_EQ(p.get(kCount), 7);
  EXPECT_EQ(p.get(kDelay), 1.5);
  EXPECT_FALSE(p.get(kOn));
  EXPECT_EQ(p.get(kTarget), "m");
  EXPECT_EQ(p.get(kPeer), kNoNode) << "an empty reference names no node";
  EXPECT_EQ(p.origin(kTarget), "t.yaml:2:3");
  EXPECT_EQ(config_error([&] { p.check(p.get(kCount) < 5, kCount, "must be below 5"); }),
            "o: parameter 'count' must be below 5");
  EXPECT_EQ(config_error([] {
              core::resolve_params({kCount, kTarget}, {}, "x.impl", "t.yaml:4:9");
            }),
            "t.yaml:4:9: x.impl needs parameter 'target' (where to send)");
}

TEST(SystemAttributes, APublishedAttributeIsReadByItsHandleInItsType) {
  std::vector<RawParam> attrs;
  put_attr(attrs, kCount, 5, "gen");
  put_attr(attrs, kDelay, 2.5, "gen");
  put_attr(attrs, kTarget, "mem", "gen");
  ASSERT_EQ(attrs.size(), 3u);
  EXPECT_EQ(attrs[0].name, "count");
  EXPECT_EQ(attr(attrs, kCount), 5);
  EXPECT_EQ(attr(attrs, kDelay), 2.5);
  EXPECT_EQ(attr(attrs, kTarget), "mem");
  constexpr FloatParam kCountAsFloat{"count", 0.0, "an int attribute reads as a float"};
  EXPECT_EQ(attr(attrs, kCountAsFloat), 5.0);
  constexpr IntParam kMissing{"missing", 7, "not published"};
  EXPECT_EQ(attr(attrs, kMissing), std::nullopt);
  EXPECT_EQ(attr_or(attrs, kMissing), 7) << "a reader that can do without it takes the declared default";
  constexpr IntParam kTargetAsInt{"target", 0, "published as a string"};
  EXPECT_EQ(attr(attrs, kTargetAsInt), std::nullopt) << "another type is not this attribute";
}

TEST(ResolveParams, ReadingAnUndeclaredOrMistypedParameterIsAnError) {
  Params p = core::resolve_params(specs(), {{"target", std::string("m"), "o"}}, "x.impl", "o");
  EXPECT_THROW(p.get_int("nope"), Error);
  EXPECT_THROW(p.get_string("count"), Error);
  EXPECT_EQ(p.get_float("count"), 3.0) << "an int reads as a float";
}

}  // namespace
}  // namespace kbsim

namespace kbsim {
namespace {

// --- duplicate keys and malformed names -------------------------------------------------

TEST(TopologyConfig, DuplicateKeyInAnEdgeIsAnError) {
  // yaml-cpp accepts duplicate keys; kbsim refuses them, naming both places.
  std::string e = parse_error(with_edge("  - { src: host, dst: sw0, latency_ns: 1, latency_ns: 7 }"));
  EXPECT_THAT(e, StartsWith("t.yaml:6:"));
  EXPECT_THAT(e, HasSubstr("latency_ns"));
}

TEST(TopologyConfig, DuplicateKeyInANodeIsAnError) {
  // yaml-cpp keeps both pairs; the loader must refuse the second.
  std::string yaml = kBase;
  yaml.replace(yaml.find("id: host,"), 9, "id: host, id: other,");
  std::string e = parse_error(yaml);
  EXPECT_THAT(e, StartsWith("t.yaml:2:"));
  EXPECT_THAT(e, HasSubstr("'id'"));
}

TEST(TopologyConfig, EdgeKindMustBeAName) {
  // A list or map where the port kind belongs is refused.
  std::string e = parse_error(with_edge("  - { src: host, dst: sw0, latency_ns: 2, kind: [noc] }"));
  EXPECT_THAT(e, StartsWith("t.yaml:6:"));
  EXPECT_THAT(e, HasSubstr("kind"));
}

TEST(Text, NumbersInMessagesAreShortAndReadBackExactly) {
  // As a user would write them: never a 300-digit integer, never 0.000000.
  EXPECT_EQ(format_number(1e300), "1e300");
  EXPECT_EQ(format_number(1e-300), "1e-300");
  EXPECT_EQ(format_number(1e-7), "1e-7");
  EXPECT_EQ(format_number(1e15), "1e15");
  EXPECT_EQ(format_number(0.25), "0.25");
  EXPECT_EQ(format_number(1536), "1536");
  EXPECT_EQ(format_number(-2.5), "-2.5");
  EXPECT_EQ(format_ns(1.25), "1.25");
  EXPECT_EQ(format_ns(1e300), "1e300");
  // A real parameter value stays visibly real.
  EXPECT_EQ(format_value(ParamValue{2.0}), "2.0");
  EXPECT_EQ(format_value(ParamValue{1e-300}), "1e-300");
  EXPECT_EQ(format_value(ParamValue{0.1}), "0.1");
  EXPECT_EQ(format_value(ParamValue{std::int64_t{7}}), "7");
}

}  // namespace
}  // namespace kbsim
