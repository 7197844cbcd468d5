// The AHBM topology front-end (this plugin): the default system of topology.yaml,
// the reference's node ids, link values, routing views and attributes, --set
// overrides, the cube's router mesh, and the errors users see.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
// GCC 12 with -O2 and the sanitizers reports a false -Wmaybe-uninitialized inside
// libstdc++'s std::function, as instantiated by <regex>.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <regex>
#include <set>
#include <sstream>

#include "build.hpp"
#include "kbsim/testing_cli.hpp"
#include "test_load.hpp"

using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace kbsim {
namespace {

using ahbm_topology::plugins;
using testkit::config_error;

const std::string kDefault = KBSIM_SOURCE_DIR "/topology.yaml";
const std::string kMin = "system: { sips: { count: 1 } }\n";  // everything else has defaults

std::string default_error(const std::vector<std::string>& overrides) {
  return config_error([&] { plugins().load_topology(kDefault, overrides); });
}

/// The ConfigError of reading a topology given as YAML text (named "t.yaml").
std::string parse_error(const std::string& yaml) {
  return config_error([&] { plugins().parse_topology(yaml, "t.yaml"); });
}

/// Nodes and edges by id / "src->dst".
/// Lookups into a graph, which must outlive the index.
struct Index {
  explicit Index(const Graph& g) {
    for (const auto& n : g.nodes) nodes[n.id] = &n;
    for (const auto& e : g.edges) edges[e.src + "->" + e.dst] = &e;
  }
  bool has(const std::string& id) const { return nodes.count(id) > 0; }
  const EdgeSpec& edge(const std::string& a, const std::string& b) const {
    auto it = edges.find(a + "->" + b);
    if (it == edges.end()) throw std::runtime_error("no edge " + a + " -> " + b);
    return *it->second;
  }
  std::map<std::string, const NodeSpec*> nodes;
  std::map<std::string, const EdgeSpec*> edges;
};

std::size_t count_ids(const Graph& g, const std::string& pattern) {
  const std::regex re(pattern);
  std::size_t n = 0;
  for (const auto& node : g.nodes) n += std::regex_match(node.id, re);
  return n;
}
const std::string kRouter = R"(sip\d+\.cube\d+\.r\d+c\d+)";

std::int64_t int_attr(const Graph& g, const char* name) {
  const ParamValue* v = find_attr(g.attrs, name);
  return v && std::holds_alternative<std::int64_t>(*v) ? std::get<std::int64_t>(*v) : -1;
}
const RawParam* param(const NodeSpec& n, const std::string& name) {
  for (const auto& p : n.params)
    if (p.name == name) return &p;
  return nullptr;
}

// --- the default system ------------------------------------------------------------

// Hand count of topology.yaml (4x4 cubes per SIP, IO ports on cube (0,0) N and (1,0) N):
//   per cube: 32 routers + m_cpu + sram + 8 hbm_ctrl + 8 PEs x 9 parts (pe_cpu, pe_scheduler, pe_dma,
//   pe_fetch_store, pe_gemm, pe_math, pe_tcm, pe_mmu, pe_ipcq) = 114                         -> x16 = 1824
//   UCIe sides per SIP: 24 cube seams x 2 sides + 2 IO-facing sides = 50, each port + 4 conns = 250
//   IO chiplet: pcie_ep, io_cpu, io_noc + 2 PHYs x (io_ucie + 4 conns) = 13
//   per SIP 1824 + 250 + 13 = 2087; 2 SIPs + fabric.switch0 = 4175 nodes.
// Directed edges: per cube 48 mesh links (60 in a 6x6 grid - 12 touching the HBM zone) x 2 = 96, + m_cpu 2,
//   sram 2, hbm 16, per PE (pe_dma, pe_cpu, pe_mmu)<->router 6 + 13 internal links x 2 = 32 -> x8 = 256;
//   = 372 -> x16 = 5952; UCIe 50 sides x 4 conns x 4 = 800; seams 24 x 2 = 48;
//   IO: pcie 2 + ep/cpu<->noc 4 + 2 PHYs x (4 conns x 4 + 2 to the cube) = 42.
//   Per SIP 6842; x2 = 13684 edges (both agree with `kbsim topology`).
TEST(AhbmTopology, DefaultCompilesWithTheHandCountedNodesAndEdges) {
  Graph g = plugins().load_topology(kDefault, {});
  EXPECT_EQ(g.nodes.size(), 4175u);
  EXPECT_EQ(g.edges.size(), 13684u);
  EXPECT_EQ(count_ids(g, R"(sip\d+\..*)"), 4174u);
  EXPECT_EQ(count_ids(g, kRouter), 2u * 16 * 32);
  EXPECT_EQ(count_ids(g, R"(sip\d+\.cube\d+\.hbm_ctrl\.pe[0-7])"), 2u * 16 * 8);
  EXPECT_EQ(count_ids(g, R"(sip\d+\.cube\d+\.m_cpu)"), 32u);
  EXPECT_EQ(count_ids(g, R"(sip\d+\.cube\d+\.sram)"), 32u);
  EXPECT_EQ(count_ids(g, R"(sip\d+\.cube\d+\.pe[0-7]\.pe_dma)"), 256u);
  EXPECT_EQ(count_ids(g, R"(sip\d+\.cube\d+\.pe[0-7]\.pe_tcm)"), 256u);
  EXPECT_EQ(
      count_ids(g, R"(sip\d+\.cube\d+\.pe[0-7]\.(pe_cpu|pe_scheduler|pe_fetch_store|pe_gemm|pe_math|pe_mmu|pe_ipcq))"),
      7u * 256);
  EXPECT_EQ(count_ids(g, R"(sip\d+\.cube\d+\.ucie-[NESW])"), 100u);
  EXPECT_EQ(count_ids(g, R"(sip\d+\.cube\d+\.ucie-[NESW]\.conn[0-3])"), 400u);
  EXPECT_EQ(count_ids(g, R"(sip\d+\.io\d+\..*)"), 26u);
  Index ix(g);
  EXPECT_EQ(ix.nodes.size(), g.nodes.size()) << "duplicate node ids";
  EXPECT_EQ(ix.nodes.at("fabric.switch0")->impl, "builtin.switch");
  EXPECT_EQ(ix.nodes.at("sip1.io0.pcie_ep")->impl, "builtin.pcie_ep");
  EXPECT_EQ(ix.nodes.at("sip1.io0.io_ucie-P1")->impl, "builtin.ucie");
  for (const char* io : {"pcie_ep", "io_cpu", "io_noc", "io_ucie-P0", "io_ucie-P1"})
    EXPECT_EQ(count_ids(g, R"(sip[01]\.io0\.)" + std::string(io)), 2u) << io;
  EXPECT_EQ(count_ids(g, R"(sip[01]\.io0\.io_ucie-P[01]\.conn[0-3])"), 16u);  // 4 per PHY
  // The edges by kind (same arithmetic as above, summed over both SIPs).
  std::map<std::string, std::size_t> kinds;
  for (const auto& e : g.edges) ++kinds[e.kind];
  std::string by_kind;
  for (const auto& [kind, n] : kinds) by_kind += kind + "=" + std::to_string(n) + " ";
  EXPECT_EQ(by_kind,
            "command=1024 cube_to_io=4 hbm_to_router=256 io_internal=72 io_to_cube=4 mcpu_to_router=32 pcie=4 "
            "pe_data=512 pe_internal=6144 pe_to_router=256 router_mesh=3072 router_to_hbm=256 router_to_mcpu=32 "
            "router_to_pe=256 router_to_sram=32 router_to_ucie_conn=400 sram_to_router=32 ucie_conn_to_router=400 "
            "ucie_internal=800 ucie_mesh=96 ");
}

TEST(AhbmTopology, NodeIdsFollowTheReference) {
  const Graph g = plugins().load_topology(kDefault, {});
  Index ix(g);
  for (const char* id : {"sip0.cube0.r0c0", "sip0.cube0.r5c5", "sip0.cube0.hbm_ctrl.pe3", "sip0.cube5.pe2.pe_dma",
                         "sip1.cube15.pe7.pe_tcm", "sip1.io0.pcie_ep", "sip0.cube0.ucie-E.conn2", "sip0.cube0.m_cpu",
                         "sip0.cube0.sram", "sip0.cube0.ucie-N", "sip0.io0.io_ucie-P1.conn3"})
    EXPECT_TRUE(ix.has(id)) << id;
  // The HBM zone has no routers; sides facing nothing have no UCIe port; nothing beyond the counts.
  for (const char* id : {"sip0.cube0.r2c2", "sip0.cube0.r2c3", "sip0.cube0.r3c2", "sip0.cube0.r3c3", "sip0.cube0.r6c0",
                         "sip0.cube0.ucie-W", "sip0.cube2.ucie-N", "sip0.cube15.ucie-S", "sip0.cube0.ucie-E.conn4",
                         "sip0.cube0.pe8.pe_dma", "sip0.cube16.r0c0", "sip2.io0.pcie_ep", "sip0.io1.pcie_ep"})
    EXPECT_FALSE(ix.has(id)) << id;
}

TEST(AhbmTopology, EdgesCarryTheSpecifiedBandwidthLatencyAndKind) {
  Graph g = plugins().load_topology(kDefault, {});
  Index ix(g);
  // PE3 sits at r1c5; 8 channels x 32 GB/s x efficiency 1.0.
  const EdgeSpec& hbm = ix.edge("sip0.cube0.r1c5", "sip0.cube0.hbm_ctrl.pe3");
  EXPECT_DOUBLE_EQ(hbm.bandwidth_gbs, 256.0);
  EXPECT_DOUBLE_EQ(hbm.route_mm, 0.0);
  EXPECT_EQ(hbm.kind, "router_to_hbm");
  EXPECT_EQ(ix.edge("sip0.cube0.hbm_ctrl.pe3", "sip0.cube0.r1c5").kind, "hbm_to_router");
  const EdgeSpec& dma = ix.edge("sip0.cube5.pe2.pe_dma", "sip0.cube5.r1c4");
  EXPECT_EQ(dma.bandwidth_gbs, 256.0);
  EXPECT_EQ(dma.kind, "pe_to_router");
  EXPECT_EQ(ix.edge("sip0.cube5.r1c4", "sip0.cube5.pe2.pe_dma").kind, "router_to_pe");
  EXPECT_EQ(ix.edge("sip0.cube5.pe2.pe_dma", "sip0.cube5.pe2.pe_tcm").bandwidth_gbs, 512.0);
  EXPECT_EQ(ix.edge("sip0.cube0.r1c5", "sip0.cube0.ucie-E.conn1").bandwidth_gbs, 128.0);  // E conns: rows 0,1,4,5
  EXPECT_EQ(ix.edge("sip0.cube0.ucie-E.conn1", "sip0.cube0.ucie-E").kind, "ucie_internal");
  const EdgeSpec& seam = ix.edge("sip0.cube0.ucie-E", "sip0.cube1.ucie-W");
  EXPECT_EQ(seam.bandwidth_gbs, 512.0);
  EXPECT_DOUBLE_EQ(seam.latency_ns, 0.1);  // 1.0 mm x 0.1 ns/mm
  EXPECT_DOUBLE_EQ(seam.route_mm, 1.0);    // what distance routing counts
  EXPECT_EQ(seam.kind, "ucie_mesh");
  EXPECT_EQ(ix.edge("sip1.cube4.ucie-N", "sip1.cube0.ucie-S").kind, "ucie_mesh");
  const EdgeSpec& io = ix.edge("sip0.io0.io_ucie-P1", "sip0.cube1.ucie-N");
  EXPECT_EQ(io.kind, "io_to_cube");
  EXPECT_DOUBLE_EQ(io.latency_ns, 0.2);  // 2.0 mm
  EXPECT_EQ(io.bandwidth_gbs, 128.0);    // one connection's, as the reference's port map builds it
  EXPECT_DOUBLE_EQ(io.route_mm, 2.0);
  EXPECT_EQ(ix.edge("sip0.cube1.ucie-N", "sip0.io0.io_ucie-P1").kind, "cube_to_io");
  const EdgeSpec& mesh = ix.edge("sip0.cube0.r0c0", "sip0.cube0.r0c1");
  EXPECT_DOUBLE_EQ(mesh.latency_ns, 0.15);  // 1.5 mm PE pitch
  EXPECT_DOUBLE_EQ(mesh.route_mm, 1.5);
  EXPECT_EQ(mesh.bandwidth_gbs, 256.0);
  EXPECT_EQ(mesh.kind, "router_mesh");
  EXPECT_DOUBLE_EQ(ix.edge("sip0.cube0.r0c1", "sip0.cube0.r0c2").latency_ns, 0.3);  // relay column, 3.0 mm
  const EdgeSpec& pcie = ix.edge("fabric.switch0", "sip1.io0.pcie_ep");
  EXPECT_EQ(pcie.bandwidth_gbs, 256.0);
  EXPECT_DOUBLE_EQ(pcie.latency_ns, 0.0);
  EXPECT_EQ(g.route_metric, kbsim::RouteMetric::kDistance);
  EXPECT_EQ(ix.edge("sip0.cube0.r2c0", "sip0.cube0.m_cpu").kind, "router_to_mcpu");
  EXPECT_EQ(ix.edge("sip0.cube0.sram", "sip0.cube0.r3c0").bandwidth_gbs, 128.0);
  for (const auto& e : g.edges) EXPECT_EQ(e.flit_bytes, 256u);
}

TEST(AhbmTopology, ViewsAndAttributes) {
  Graph g = plugins().load_topology(kDefault, {});
  ASSERT_EQ(g.views.size(), 3u);
  EXPECT_EQ(g.views[0].name, "data");
  EXPECT_EQ(g.views[0].exclude_kinds, (std::vector<std::string>{"command", "pe_internal"}));
  EXPECT_EQ(g.views[1].name, "memory");
  EXPECT_EQ(g.views[1].exclude_kinds, (std::vector<std::string>{"pe_internal"}));  // reaches the PE TCMs
  EXPECT_EQ(g.views[2].name, "local");
  EXPECT_EQ(g.views[2].exclude_kinds,
            (std::vector<std::string>{"command", "pe_internal", "ucie_internal", "ucie_conn_to_router",
                                      "router_to_ucie_conn", "ucie_mesh", "io_to_cube", "cube_to_io"}));
  EXPECT_EQ(int_attr(g, "ahbm.sips"), 2);
  EXPECT_EQ(int_attr(g, "ahbm.cubes_per_sip"), 16);
  EXPECT_EQ(int_attr(g, "ahbm.pes_per_cube"), 8);
  EXPECT_EQ(int_attr(g, "ahbm.hbm_slice_bytes"), std::int64_t{6} << 30);
  EXPECT_EQ(int_attr(g, "ahbm.hbm_bytes_per_cube"), std::int64_t{48} << 30);
  EXPECT_EQ(int_attr(g, "ahbm.sip_w"), 2);
  EXPECT_EQ(int_attr(g, "ahbm.sip_h"), 1);
}

// --- --set overrides -------------------------------------------------------------------

TEST(AhbmTopology, SixSipsOnATorusNeedAGrid) {
  Graph g = plugins().load_topology(
      kDefault, {"system.sips.count=6", "system.sips.topology=torus_2d", "system.sips.w=3", "system.sips.h=2"});
  EXPECT_EQ(g.nodes.size(), 6u * 2087 + 1);
  EXPECT_EQ(int_attr(g, "ahbm.sips"), 6);
  EXPECT_EQ(int_attr(g, "ahbm.sip_w"), 3);
  EXPECT_EQ(int_attr(g, "ahbm.sip_h"), 2);
  EXPECT_EQ(count_ids(g, R"(sip\d\.io0\.pcie_ep)"), 6u);
  EXPECT_THAT(default_error({"system.sips.count=6", "system.sips.topology=torus_2d"}),
              HasSubstr("--set system.sips.topology=torus_2d: system.sips.topology: torus_2d over 6 SIPs needs "
                        "system.sips.w and h (the count is not a square)"));
  EXPECT_EQ(default_error({"system.sips.count=6", "system.sips.w=2", "system.sips.h=2"}),
            "--set system.sips.w=2: system.sips.w: w x h = 4 but count = 6");
}

TEST(AhbmTopology, OverridesReachEveryGeneratedNode) {
  Graph g = plugins().load_topology(kDefault, {"cube.components.router.attrs.overhead_ns=3",
                                               "cube.pe_template.components.pe_dma.impl=custom.store_forward"});
  const std::regex router(kRouter), dma(R"(sip\d+\.cube\d+\.pe\d+\.pe_dma)");
  std::size_t routers = 0, dmas = 0;
  for (const auto& n : g.nodes) {
    if (std::regex_match(n.id, router)) {
      ++routers;
      const RawParam* p = param(n, "overhead_ns");
      ASSERT_NE(p, nullptr) << n.id;
      EXPECT_EQ(p->value, ParamValue{std::int64_t{3}}) << n.id;
      EXPECT_EQ(p->origin, "--set cube.components.router.attrs.overhead_ns=3");
    } else if (std::regex_match(n.id, dma)) {
      ++dmas;
      EXPECT_EQ(n.impl, "custom.store_forward") << n.id;
      EXPECT_EQ(n.origin, "--set cube.pe_template.components.pe_dma.impl=custom.store_forward");
    } else if (n.impl == "builtin.forwarding") {
      EXPECT_EQ(param(n, "overhead_ns")->value, ParamValue{0.0}) << n.id << " is not a router";
    }
  }
  EXPECT_EQ(routers, 1024u);
  EXPECT_EQ(dmas, 256u);
}

TEST(AhbmTopology, RoutingIsByDistanceUnlessSetToLatency) {
  EXPECT_EQ(plugins().load_topology(kDefault, {}).route_metric, kbsim::RouteMetric::kDistance);
  EXPECT_EQ(plugins().load_topology(kDefault, {"system.routing=latency"}).route_metric, kbsim::RouteMetric::kLatency);
}

TEST(AhbmTopology, ARoutingWeightChangesWhatRoutingCountsNotTheTiming) {
  const Graph g = plugins().load_topology(
      kDefault, {"sip.links.ucie.routing_weight_mm=3.5", "system.links.pcie.routing_weight_mm=7",
                 "sip.io_chiplets.0.cube_ports.1.routing_weight_mm=0.5"});
  Index ix(g);
  const EdgeSpec& seam = ix.edge("sip0.cube0.ucie-E", "sip0.cube1.ucie-W");
  EXPECT_DOUBLE_EQ(seam.route_mm, 3.5);
  EXPECT_DOUBLE_EQ(seam.latency_ns, 0.1);  // still 1.0 mm of wire
  EXPECT_DOUBLE_EQ(ix.edge("sip1.io0.pcie_ep", "fabric.switch0").route_mm, 7.0);
  EXPECT_DOUBLE_EQ(ix.edge("sip0.io0.io_ucie-P1", "sip0.cube1.ucie-N").route_mm, 0.5);
  EXPECT_DOUBLE_EQ(ix.edge("sip0.io0.io_ucie-P0", "sip0.cube0.ucie-N").route_mm, 2.0);  // unset: its distance
  EXPECT_THAT(default_error({"sip.links.ucie.routing_weight_mm=-1"}),
              HasSubstr("sip.links.ucie.routing_weight_mm: must be a number between 0 and 1e6, got -1"));
}

TEST(AhbmTopology, FewerHbmChannelsHalveTheHbmLink) {
  const Graph g = plugins().load_topology(
      kDefault, {"cube.memory_map.hbm_channels_per_pe=4", "cube.memory_map.hbm_pseudo_channels=32"});
  Index ix(g);
  EXPECT_DOUBLE_EQ(ix.edge("sip1.cube9.r0c0", "sip1.cube9.hbm_ctrl.pe0").bandwidth_gbs, 128.0);
  EXPECT_DOUBLE_EQ(ix.edge("sip1.cube9.hbm_ctrl.pe0", "sip1.cube9.r0c0").bandwidth_gbs, 128.0);
}

TEST(AhbmTopology, UcieConnectionsPerSide) {
  Graph g = plugins().load_topology(kDefault, {"cube.ucie.n_connections=2"});
  EXPECT_EQ(count_ids(g, R"(sip\d+\.cube\d+\.ucie-[NESW]\.conn[01])"), 200u);
  EXPECT_EQ(count_ids(g, R"(sip\d+\.cube\d+\.ucie-[NESW]\.conn\d+)"), 200u);
  EXPECT_EQ(count_ids(g, R"(sip\d+\.io0\.io_ucie-P\d\.conn\d)"), 16u);  // the IO chiplet keeps its own 4
}

TEST(AhbmTopology, CompilingTwiceGivesTheSameGraph) {
  auto dump = [](const Graph& g) {
    std::ostringstream out;
    out.precision(17);
    for (const auto& n : g.nodes) {
      out << n.id << ' ' << n.impl << ' ' << n.origin;
      for (const auto& p : n.params)
        out << ' ' << p.name << '=' << p.value.index() << format_value(p.value) << '@' << p.origin;
      out << '\n';
    }
    for (const auto& e : g.edges)
      out << e.src << ' ' << e.dst << ' ' << e.bandwidth_gbs << ' ' << e.latency_ns << ' ' << e.flit_bytes << ' '
          << e.kind << ' ' << e.origin << '\n';
    return out.str();
  };
  std::string a = dump(plugins().load_topology(kDefault, {"system.sips.count=3"}));
  EXPECT_EQ(a, dump(plugins().load_topology(kDefault, {"system.sips.count=3"})));
  EXPECT_NE(a, dump(plugins().load_topology(kDefault, {})));
}

// --- the cube mesh ------------------------------------------------------------------------

TEST(AhbmMesh, DefaultSixBySixWithTheHbmZone) {
  ahbm_topology::MeshLayout m = ahbm_topology::load_ahbm(kDefault, {}).mesh;
  ASSERT_EQ(m.rows(), 6u);
  ASSERT_EQ(m.cols(), 6u);
  EXPECT_EQ(std::count(m.present.begin(), m.present.end(), true), 32);
  EXPECT_EQ(m.hbm_row0, 2u);
  EXPECT_EQ(m.hbm_col0, 2u);
  for (unsigned r : {2u, 3u})
    for (unsigned c : {2u, 3u}) EXPECT_FALSE(m.has(r, c));
  using ahbm_topology::Cell;
  EXPECT_EQ(m.pe, (std::vector<Cell>{{0, 0}, {0, 1}, {1, 4}, {1, 5}, {4, 0}, {4, 1}, {5, 4}, {5, 5}}));
  EXPECT_EQ(m.m_cpu, (Cell{2, 0}));
  EXPECT_EQ(m.sram, (Cell{3, 0}));
  EXPECT_EQ(m.ucie[0], (std::vector<Cell>{{0, 0}, {0, 1}, {0, 4}, {0, 5}}));  // N
  EXPECT_EQ(m.ucie[1], (std::vector<Cell>{{0, 5}, {1, 5}, {4, 5}, {5, 5}}));  // E
  EXPECT_EQ(m.ucie[2], (std::vector<Cell>{{5, 0}, {5, 1}, {5, 4}, {5, 5}}));  // S
  EXPECT_EQ(m.ucie[3], (std::vector<Cell>{{0, 0}, {1, 0}, {4, 0}, {5, 0}}));  // W
  EXPECT_EQ(m.col_x, (std::vector<double>{1.5, 3.0, 6.0, 9.0, 12.0, 13.5}));
  EXPECT_EQ(m.row_y, (std::vector<double>{1.5, 3.0, 6.0, 9.0, 12.0, 13.5}));
}

TEST(AhbmMesh, ThreePesPerCornerOnAWiderCube) {
  ahbm_topology::Compiled c = ahbm_topology::load_ahbm(
      kDefault, {"cube.pe_layout.pe_per_corner=3", "cube.geometry.cube_mm.w=20",
                 "cube.memory_map.hbm_slices_per_cube=12", "cube.memory_map.hbm_pseudo_channels=96"});
  const ahbm_topology::MeshLayout& m = c.mesh;
  // Columns: PEs at 1.5 3 4.5 | 15.5 17 18.5, the 11 mm gap split in 4 by relays (<= 3 mm): 9 columns.
  ASSERT_EQ(m.rows(), 6u);
  ASSERT_EQ(m.cols(), 9u);
  EXPECT_EQ(std::count(m.present.begin(), m.present.end(), true), 6 * 9 - 4);
  EXPECT_EQ(m.hbm_col0, 3u);
  using ahbm_topology::Cell;
  EXPECT_EQ(m.pe, (std::vector<Cell>{
                      {0, 0}, {0, 1}, {0, 2}, {1, 6}, {1, 7}, {1, 8}, {4, 0}, {4, 1}, {4, 2}, {5, 6}, {5, 7}, {5, 8}}));
  EXPECT_EQ(m.ucie[0], (std::vector<Cell>{{0, 0}, {0, 2}, {0, 6}, {0, 8}}));  // 4 of the 6 PE columns, spread
  EXPECT_EQ(int_attr(c.graph, "ahbm.pes_per_cube"), 12);
  EXPECT_EQ(int_attr(c.graph, "ahbm.hbm_slice_bytes"), std::int64_t{4} << 30);
  EXPECT_EQ(count_ids(c.graph, R"(sip0\.cube0\.pe\d+\.pe_dma)"), 12u);
  EXPECT_EQ(count_ids(c.graph, R"(sip0\.cube0\.r\d+c\d+)"), 50u);
  // Every router of a cube is reachable from r0c0 over the mesh links.
  std::map<std::string, std::vector<std::string>> adj;
  for (const auto& e : c.graph.edges)
    if (e.kind == "router_mesh" && e.src.rfind("sip0.cube0.", 0) == 0) adj[e.src].push_back(e.dst);
  std::set<std::string> seen{"sip0.cube0.r0c0"};
  std::vector<std::string> todo{"sip0.cube0.r0c0"};
  while (!todo.empty()) {
    std::string at = todo.back();
    todo.pop_back();
    for (const auto& n : adj[at])
      if (seen.insert(n).second) todo.push_back(n);
  }
  EXPECT_EQ(seen.size(), 50u);
}

TEST(AhbmMesh, TooSmallCubeIsAConfigError) {
  EXPECT_THAT(default_error({"cube.geometry.cube_mm.w=5"}),
              HasSubstr("--set cube.geometry.cube_mm.w=5: cube.geometry.cube_mm.w: cube_mm.w = 5 mm is too narrow for "
                        "2 PEs per corner at 1.5 mm pitch"));
}

// --- errors ---------------------------------------------------------------------------------

TEST(AhbmErrors, UnknownKeysAtEveryLevelWithPositionAndSuggestion) {
  EXPECT_EQ(parse_error(kMin + "cube:\n  memory_map:\n    hbm_chanels_per_pe: 8\n"),
            "t.yaml:4:5: unknown key 'hbm_chanels_per_pe' in cube.memory_map (closest: hbm_channels_per_pe, "
            "hbm_channel_bw_gbs, hbm_slices_per_cube)");
  EXPECT_EQ(parse_error(kMin + "sips: 2\n"), "t.yaml:2:1: unknown key 'sips' in the topology (closest: sip)");
  EXPECT_EQ(parse_error("system: { sips: { count: 1, cout: 2 } }\n"),
            "t.yaml:1:29: unknown key 'cout' in system.sips (closest: count)");
  EXPECT_EQ(parse_error("sip: { cube_mesh: { w: 4, hh: 4 } }\n"),
            "t.yaml:1:27: unknown key 'hh' in sip.cube_mesh (closest: h, w)");
  EXPECT_THAT(parse_error("sip: { io_chiplets: [ { cube_ports: [ { cube: { xy: [0, 0] }, side: N } ] } ] }\n"),
              HasSubstr("unknown key 'side' in sip.io_chiplets.0.cube_ports.0 (closest: cube_side"));
  EXPECT_THAT(parse_error("cube: { pe_template: { components: { pe_dma: { impl: builtin.pe_dma, atach: dma } } } }\n"),
              HasSubstr("unknown key 'atach' in cube.pe_template.components.pe_dma (closest: attach)"));
}

TEST(AhbmErrors, WrongTypeRangeAndChoice) {
  EXPECT_EQ(parse_error("system: { sips: { count: two } }\n"),
            "t.yaml:1:26: system.sips.count: must be a whole number, got two");
  EXPECT_EQ(parse_error(kMin + "sip: { cube_mesh: { w: 9 } }\n"),
            "t.yaml:2:24: sip.cube_mesh.w: must be between 1 and 4, got 9");
  EXPECT_EQ(parse_error("system: { sips: { count: 1, topology: ring } }\n"),
            "t.yaml:1:39: system.sips.topology: must be one of ring_1d, torus_2d, mesh_2d_no_wrap, got 'ring' "
            "(closest: ring_1d)");
  EXPECT_EQ(parse_error(kMin + "cube: { memory_map: { burst_bytes: 200 } }\n"),
            "t.yaml:2:36: cube.memory_map.burst_bytes: must be a power of two");
  EXPECT_EQ(parse_error("system: { routing: shortest }\n"),
            "t.yaml:1:20: system.routing: must be one of distance, latency, got 'shortest' (known: distance, latency)");
}

TEST(AhbmErrors, CubePortsMustFaceTheSipEdgeAndHaveDistinctPhys) {
  const std::string head = kMin + "sip:\n  io_chiplets:\n    - cube_ports:\n";
  EXPECT_EQ(parse_error(head + "        - { cube: { xy: [1, 1] }, cube_side: N }\n"),
            "t.yaml:5:46: sip.io_chiplets.0.cube_ports.0.cube_side: side N of that cube faces another cube; IO "
            "attaches on the SIP edge");
  EXPECT_EQ(parse_error(head + "        - { cube: { xy: [0, 0] }, cube_side: N, phy: P0 }\n" +
                        "        - { cube: { xy: [1, 0] }, cube_side: N, phy: P0 }\n"),
            "t.yaml:6:54: sip.io_chiplets.0.cube_ports.1.phy: PHY 'P0' is used twice (first at t.yaml:5:11)");
}

TEST(AhbmErrors, ANodeReferenceToAMissingTemplateComponentIsNamed) {
  EXPECT_EQ(default_error({"cube.pe_template.components.pe_dma.attrs.mmu=pe_mmmu"}),
            "--set cube.pe_template.components.pe_dma.attrs.mmu=pe_mmmu: parameter 'mmu' of "
            "cube.pe_template.components.pe_dma names 'pe_mmmu', which is not a PE template component (closest: "
            "pe_mmu, pe_cpu, pe_dma)");
}

TEST(AhbmErrors, CrossFieldChecks) {
  EXPECT_EQ(parse_error(kMin + "cube: { memory_map: { hbm_slices_per_cube: 4, hbm_pseudo_channels: 32 } }\n"),
            "t.yaml:2:44: cube.memory_map.hbm_slices_per_cube: must equal the PEs per cube (8 = corners x "
            "pe_per_corner): each PE owns one slice");
  EXPECT_THAT(
      parse_error(kMin + "cube: { memory_map: { hbm_pseudo_channels: 32 } }\n"),
      HasSubstr(
          "t.yaml:2:44: cube.memory_map.hbm_pseudo_channels: must equal hbm_channels_per_pe x hbm_slices_per_cube"));
  EXPECT_EQ(parse_error(kMin + "cube:\n  pe_template:\n    components: { pe_dma: { attach: dma }, pe_tcm: {} }\n"
                               "    links:\n      - { src: pe_dma, dst: pe_tcn }\n"),
            "t.yaml:6:9: cube.pe_template.links: 'pe_tcn' is not a PE template component (closest: pe_tcm, pe_dma)");
}

TEST(AhbmErrors, ErrorsFromOverridesNameTheSet) {
  EXPECT_EQ(default_error({"system.sips.count=two"}),
            "--set system.sips.count=two: system.sips.count: must be a whole number, got two");
  EXPECT_THAT(default_error({"cube.memory_map.hbm_chanels_per_pe=4"}),
              StartsWith("--set cube.memory_map.hbm_chanels_per_pe=4: unknown key 'hbm_chanels_per_pe' in "
                         "cube.memory_map (closest: hbm_channels_per_pe, "));
  EXPECT_EQ(default_error({"system.sips.topology=ring"}),
            "--set system.sips.topology=ring: system.sips.topology: must be one of ring_1d, torus_2d, mesh_2d_no_wrap, "
            "got 'ring' (closest: ring_1d)");
}

}  // namespace
}  // namespace kbsim

namespace kbsim {
namespace {

TEST(AhbmTopology, AMinimalDocumentGetsTheReferencePeTemplate) {
  Graph g = plugins().parse_topology(kMin, "t.yaml");
  std::size_t dma = 0, tcm = 0, internal = 0;
  for (const auto& n : g.nodes) {
    dma += n.impl == "builtin.pe_dma";
    tcm += n.impl == "builtin.pe_tcm";
  }
  std::size_t data = 0;
  for (const auto& e : g.edges) {
    internal += e.kind == "pe_internal";
    data += e.kind == "pe_data";
  }
  EXPECT_EQ(dma, 128u);  // 1 SIP x 16 cubes x 8 PEs
  EXPECT_EQ(tcm, 128u);
  EXPECT_EQ(internal, 128u * 20);  // 10 control links per PE, both directions
  EXPECT_EQ(data, 128u * 2);       // pe_dma <-> pe_tcm
}

}  // namespace
}  // namespace kbsim
