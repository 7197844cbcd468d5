// How the core chooses a route (docs/model.md, "Routing views"): least time
// (RouteMetric::kLatency) or shortest wire (kDistance), and how each breaks ties.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

namespace kbsim {
namespace {

using ::testing::HasSubstr;

constexpr Tick ns(Tick n) { return n * kPsPerNs; }

/// The node ids of the route from `from` to `to`.
std::vector<std::string> path(System& sys, const char* from, const char* to) {
  std::vector<std::string> out;
  for (const RouteHop& h : sys.route_info(from, to, "all").hops) out.emplace_back(h.node);
  return out;
}

// Two ways from a to d: through "slow" (1 mm of wire, but a 50 ns switch) and
// through "long" (10 mm, no overhead). Time prefers the long wire; distance the
// short one, whatever its overhead.
std::string two_ways(const char* routing) {
  return std::string("routing: ") + routing + R"(
defaults: { ns_per_mm: 0.1, bandwidth_gbs: 256 }
nodes:
  - { id: a, impl: builtin.endpoint }
  - { id: slow, impl: builtin.forwarding, params: { overhead_ns: 50 } }
  - { id: long, impl: builtin.forwarding }
  - { id: d, impl: builtin.endpoint }
edges:
  - { src: a, dst: slow, distance_mm: 0.5 }
  - { src: slow, dst: d, distance_mm: 0.5 }
  - { src: a, dst: long, distance_mm: 5 }
  - { src: long, dst: d, distance_mm: 5 }
)";
}

TEST(Routing, LatencyTakesTheQuickestPathDistanceTheShortestWire) {
  auto quick = test::build_system(test::shared_registry(), two_ways("latency"));
  EXPECT_THAT(path(*quick, "a", "d"), ::testing::ElementsAre("a", "long", "d"));
  RouteInfo q = quick->route_info("a", "d", "all");
  EXPECT_EQ(q.cost_unit, "ns");
  EXPECT_DOUBLE_EQ(q.cost, 0.5 + 1 + 0.5 + 1);  // two links of 0.5 ns plus a flit's 1 ns each
  EXPECT_DOUBLE_EQ(q.latency_ns(), 1.0);

  auto near = test::build_system(test::shared_registry(), two_ways("distance"));
  EXPECT_THAT(path(*near, "a", "d"), ::testing::ElementsAre("a", "slow", "d"));
  RouteInfo n = near->route_info("a", "d", "all");
  EXPECT_EQ(n.cost_unit, "mm");
  EXPECT_DOUBLE_EQ(n.cost, 1.0);
  EXPECT_DOUBLE_EQ(n.latency_ns(), 0.05 + 50 + 0.05);
}

TEST(Routing, ANodeWithOneWayOutRoutesThroughItsNeighbourAndACycleOfThemStillEnds) {
  // a -> b -> c -> a, one way out each (b's is through the 3 ns switch s); d reaches them but nothing reaches d.
  auto sys = test::build_system(test::shared_registry(), R"(
nodes:
  - { id: a, impl: builtin.forwarding }
  - { id: b, impl: builtin.forwarding, params: { overhead_ns: 2 } }
  - { id: s, impl: builtin.forwarding, params: { overhead_ns: 3 } }
  - { id: c, impl: builtin.endpoint }
  - { id: d, impl: builtin.endpoint }
edges:
  - { src: a, dst: b, latency_ns: 1 }
  - { src: b, dst: s, latency_ns: 1 }
  - { src: s, dst: c, latency_ns: 1 }
  - { src: c, dst: a, latency_ns: 1 }
  - { src: d, dst: a, latency_ns: 1 }
)");
  EXPECT_THAT(path(*sys, "a", "c"), ::testing::ElementsAre("a", "b", "s", "c"));
  EXPECT_DOUBLE_EQ(sys->route_info("a", "c", "all").cost, 3 + 2 + 3);  // three links, passing b and s
  EXPECT_THAT(path(*sys, "b", "a"), ::testing::ElementsAre("b", "s", "c", "a"));
  EXPECT_THAT([&] { path(*sys, "a", "d"); }, ::testing::ThrowsMessage<ConfigError>(HasSubstr("no path from a to d")));
}

TEST(Routing, WithoutARoutingKeyRoutesAreQuickest) {
  std::string yaml = two_ways("latency");
  yaml.erase(0, yaml.find('\n') + 1);
  auto sys = test::build_system(test::shared_registry(), yaml);
  EXPECT_THAT(path(*sys, "a", "d"), ::testing::ElementsAre("a", "long", "d"));
}

// Two equally long ways, through "zeta" (declared first) and "alpha".
const char* kTie = R"(
defaults: { ns_per_mm: 0.1, bandwidth_gbs: 256 }
nodes:
  - { id: a, impl: builtin.endpoint }
  - { id: zeta, impl: builtin.forwarding }
  - { id: alpha, impl: builtin.forwarding }
  - { id: d, impl: builtin.endpoint }
edges:
  - { src: a, dst: zeta, distance_mm: 1 }
  - { src: zeta, dst: d, distance_mm: 1 }
  - { src: a, dst: alpha, distance_mm: 1 }
  - { src: alpha, dst: d, distance_mm: 1 }
)";

TEST(Routing, DistanceTiesGoToTheFirstNameLatencyTiesToTheFirstNode) {
  auto by_name = test::build_system(test::shared_registry(), std::string("routing: distance\n") + kTie);
  EXPECT_THAT(path(*by_name, "a", "d"), ::testing::ElementsAre("a", "alpha", "d"));
  auto by_index = test::build_system(test::shared_registry(), std::string("routing: latency\n") + kTie);
  EXPECT_THAT(path(*by_index, "a", "d"), ::testing::ElementsAre("a", "zeta", "d"));
}

// Two equally long ways from a to d: one zero-length hop through "zeta" (declared first), or two through "b" and
// "c". A queue that breaks ties in the order nodes were pushed takes zeta (the fewest hops, first declared); one
// of (distance, name) pairs pops b and c before zeta, so c reaches d first. The reference's measured eastbound
// funnel (docs/model.md, "Routes: shortest wire") takes the second rule.
TEST(Routing, DistanceTiesFollowNamesNotTheOrderNodesWereReached) {
  auto sys = test::build_system(test::shared_registry(), R"(
routing: distance
defaults: { ns_per_mm: 0.1, bandwidth_gbs: 256 }
nodes:
  - { id: a, impl: builtin.endpoint }
  - { id: zeta, impl: builtin.forwarding }
  - { id: b, impl: builtin.forwarding }
  - { id: c, impl: builtin.forwarding }
  - { id: d, impl: builtin.endpoint }
edges:
  - { src: a, dst: zeta, distance_mm: 0 }
  - { src: zeta, dst: d, distance_mm: 1 }
  - { src: a, dst: b, distance_mm: 0 }
  - { src: b, dst: c, distance_mm: 0 }
  - { src: c, dst: d, distance_mm: 1 }
)");
  EXPECT_THAT(path(*sys, "a", "d"), ::testing::ElementsAre("a", "b", "c", "d"));
}

TEST(Routing, UnderDistanceALatencyOnlyEdgeHasNoLength) {
  auto sys = test::build_system(test::shared_registry(), R"(
routing: distance
defaults: { ns_per_mm: 0.1, bandwidth_gbs: 256 }
nodes:
  - { id: a, impl: builtin.endpoint }
  - { id: b, impl: builtin.forwarding }
  - { id: d, impl: builtin.endpoint }
edges:
  - { src: a, dst: d, distance_mm: 1 }
  - { src: a, dst: b, latency_ns: 100 }
  - { src: b, dst: d, latency_ns: 100 }
)");
  EXPECT_THAT(path(*sys, "a", "d"), ::testing::ElementsAre("a", "b", "d"));  // 0 mm beats 1 mm
  EXPECT_DOUBLE_EQ(sys->route_info("a", "d", "all").cost, 0.0);
}

TEST(Routing, AnUnknownMetricIsAnErrorAtItsPosition) {
  std::string e = test::parse_error("routing: fastest\nnodes:\n  - { id: a, impl: builtin.endpoint }\n");
  EXPECT_THAT(e, HasSubstr("t.yaml:1:10"));
  EXPECT_THAT(e, HasSubstr("'routing' must be latency (least time) or distance (least distance_mm)"));
}

TEST(Routing, SystemsOfOneElaborationShareRoutesWhileTheirTransitCostsAgree) {
  // A bench that builds a fresh system per scenario finds each route once: systems of one elaboration share a
  // route table as long as their nodes charge the same transit costs.
  const Graph graph = test::parse_topology(two_ways("latency"), "two_ways.yaml", {});
  auto shared = core::elaborate(graph, test::shared_registry());
  auto table = std::make_shared<core::RouteTable>();
  core::Simulation a(shared, test::shared_registry(), table), b(shared, test::shared_registry(), table);
  const NodeIndex from = a.find_node("a"), to = a.find_node("d"), slow = a.find_node("slow");
  const NodeIndex lng = a.find_node("long");
  const Route& ad = a.route(from, to, 0);
  EXPECT_EQ(&b.route(from, to, 0), &ad);
  EXPECT_EQ(ad.nodes, (std::vector<NodeIndex>{from, lng, to}));

  // A system whose "long" switch costs 100 ns to pass routes by itself, through "slow".
  core::Simulation c(shared, test::shared_registry(), table);
  c.set_transit_cost(lng, ns(100));
  const Route& cd = c.route(from, to, 0);
  EXPECT_NE(&cd, &ad);
  EXPECT_EQ(cd.nodes, (std::vector<NodeIndex>{from, slow, to}));

  // A cost changed after routing: routes asked for from then on see it (whatever other systems found), the
  // route handed out before stays valid, and the others keep the table.
  a.set_transit_cost(lng, ns(100));
  const Route& again = a.route(from, to, 0);
  EXPECT_NE(&again, &ad);
  EXPECT_EQ(again.nodes, (std::vector<NodeIndex>{from, slow, to}));
  EXPECT_EQ(ad.nodes, (std::vector<NodeIndex>{from, lng, to}));
  EXPECT_EQ(&b.route(from, to, 0), &ad);
  EXPECT_EQ(b.control_latency(ad), ns(1));  // "long" passed for free
}

TEST(Routing, ElaborationsWithTheSameRoutingInputsShareARouteTableOnAThread) {
  // A sweep's points of one topology each elaborate it anew (a runner apiece): their systems still search each
  // route once. A graph that routes differently (here one link is slower) gets a table of its own.
  const Graph graph = test::parse_topology(two_ways("latency"), "two_ways.yaml", {});
  auto first = core::elaborate(graph, test::shared_registry());
  auto again = core::elaborate(graph, test::shared_registry());
  EXPECT_EQ(core::RouteTable::for_elaboration(first), core::RouteTable::for_elaboration(again));
  Graph slower = graph;
  slower.edges[0].latency_ns *= 2;
  auto other = core::elaborate(slower, test::shared_registry());
  EXPECT_NE(core::RouteTable::for_elaboration(other), core::RouteTable::for_elaboration(first));
  core::Simulation a(first, test::shared_registry(), core::RouteTable::for_elaboration(first));
  core::Simulation b(again, test::shared_registry(), core::RouteTable::for_elaboration(again));
  const NodeIndex from = a.find_node("a"), to = a.find_node("d");
  EXPECT_EQ(&a.route(from, to, 0), &b.route(from, to, 0));
}

}  // namespace
}  // namespace kbsim
