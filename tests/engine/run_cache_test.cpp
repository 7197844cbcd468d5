// What a run shares with the runs it starts (run/run_state.hpp, RunCache): a topology loaded once per file and
// overrides, a graph elaborated once per equal graph, the last four of each kept.
#include <gtest/gtest.h>

#include "component/elaboration.hpp"
#include "harness.hpp"
#include "run/run_state.hpp"

namespace kbsim {
namespace {

TEST(RunCache, ATopologyIsLoadedOncePerFileAndOverridesAndTheLastFourAreKept) {
  core::RunCache cache;
  int loads = 0;
  auto load = [&] {
    ++loads;
    return Graph{};
  };
  const auto first = cache.topology("t.yaml", {}, load);
  EXPECT_EQ(cache.topology("t.yaml", {}, load), first);
  EXPECT_EQ(loads, 1);
  cache.topology("t.yaml", {"nodes.a.impl=x"}, load);  // other overrides: another system
  cache.topology("u.yaml", {}, load);
  EXPECT_EQ(loads, 3);
  cache.topology("v.yaml", {}, load);
  cache.topology("w.yaml", {}, load);  // the fifth: t.yaml without overrides, the oldest, leaves
  EXPECT_EQ(loads, 5);
  EXPECT_NE(cache.topology("t.yaml", {}, load), first);
  EXPECT_EQ(loads, 6);
}

TEST(RunCache, AnEqualGraphReusesTheElaborationAnotherGetsItsOwn) {
  core::RunCache cache;
  const std::string yaml =
      "nodes:\n  - { id: a, impl: builtin.endpoint }\n  - { id: b, impl: builtin.endpoint }\n"
      "edges:\n  - { src: a, dst: b, latency_ns: 1 }\n";
  auto one = std::make_shared<const Graph>(test::parse_topology(yaml, "t.yaml", {}));
  auto same = std::make_shared<const Graph>(*one);  // equal, another object
  auto other = std::make_shared<const Graph>(
      test::parse_topology(yaml + "  - { src: b, dst: a, latency_ns: 2 }\n", "t.yaml", {}));
  int made = 0;
  auto make = [&](const std::shared_ptr<const Graph>& g) {
    return [&made, g] {
      ++made;
      return core::elaborate(*g, test::shared_registry());
    };
  };
  const auto e = cache.elaboration(one, make(one));
  EXPECT_EQ(cache.elaboration(same, make(same)), e);
  EXPECT_EQ(made, 1);
  EXPECT_NE(cache.elaboration(other, make(other)), e);
  EXPECT_EQ(made, 2);
}

}  // namespace
}  // namespace kbsim
