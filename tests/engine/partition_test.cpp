// Splitting a system over ranks (split/partition.hpp): whole parts, never a
// link without latency cut, groups kept whole at the level that gives every rank
// a part, contiguous runs of about equal size, the lookahead.
#include "split/partition.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

/// A ring of `n` endpoints, links of 1 ns, except 0 ns between nodes 2 and 3.
std::string ring(unsigned n, const std::string& groups = {}) {
  std::string y = "nodes:\n";
  for (unsigned k = 0; k < n; ++k)
    y += "  - { id: n" + std::to_string(k) + ", impl: builtin.endpoint" +
         (groups.empty() ? std::string() : ", group: " + groups + std::to_string(k / 2)) + " }\n";
  y += "edges:\n";
  for (unsigned k = 0; k < n; ++k)
    y += "  - { src: n" + std::to_string(k) + ", dst: n" + std::to_string((k + 1) % n) +
         ", latency_ns: " + (k == 2 ? "0" : "1") + ", bidir: true }\n";
  return y;
}

core::Partition split(const std::string& yaml, unsigned ranks) {
  auto sys = test::build_system(test::shared_registry(), yaml);
  return core::partition(*sys->simulation().elaboration(), ranks);
}

TEST(Partition, OneRankHoldsEverything) {
  const core::Partition p = split(ring(8), 1);
  EXPECT_EQ(p.nodes_per_rank, (std::vector<std::size_t>{8}));
  EXPECT_EQ(p.cut_links, 0u);
  EXPECT_EQ(p.lookahead, kNever);
}

TEST(Partition, ContiguousRunsKeepNodesJoinedWithoutLatencyTogether) {
  // 8 nodes, 7 parts (2 and 3 are one): ranks of 4 + 4 nodes, cut between 3|4 and 7|0, both ways.
  const core::Partition p = split(ring(8), 2);
  EXPECT_EQ(p.rank_of, (std::vector<unsigned>{0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(p.cut_links, 4u);
  EXPECT_EQ(p.lookahead, ns_to_ticks(1));
  // Three ranks: a rank moves on once it holds its share (8/3, 16/3 nodes so far), and 2 and 3 stay together.
  const core::Partition q = split(ring(8), 3);
  EXPECT_EQ(q.rank_of, (std::vector<unsigned>{0, 0, 1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(core::describe(q), "3 ranks: 2 + 3 + 3 nodes, 6 cut links, lookahead 1 ns");
}

TEST(Partition, EveryRankGetsAPartAndNoMoreRanksThanParts) {
  const core::Partition p = split(ring(4), 3);  // parts {0}, {1}, {2, 3}
  EXPECT_EQ(p.rank_of, (std::vector<unsigned>{0, 1, 2, 2}));
  try {
    split(ring(4), 4);
    FAIL() << "4 nodes joined into 3 parts cannot fill 4 ranks";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot be split over 4 ranks"));
    EXPECT_THAT(e.what(), HasSubstr("into 3 parts"));
  }
}

TEST(Partition, ASendersPromisedDelayAddsToTheLookaheadAndLetsALinkWithoutLatencyBeCut) {
  // Two mesh nodes that hold what they receive for 1.5 and 2 ns, joined both ways by a link without latency: cut, with
  // the smaller promise as the lookahead. Without the promises they are one part.
  auto pair = [](const char* a, const char* b) {
    return std::string("nodes:\n  - { id: a, impl: builtin.mesh_node, params: { delay_ns: ") + a +
           " } }\n  - { id: b, impl: builtin.mesh_node, params: { delay_ns: " + b +
           " } }\nedges:\n  - { src: a, dst: b, latency_ns: 0, kind: mesh, bidir: true }\n";
  };
  const core::Partition p = split(pair("1.5", "2"), 2);
  EXPECT_EQ(p.cut_links, 2u);
  EXPECT_EQ(p.lookahead, ns_to_ticks(1.5));
  EXPECT_THROW(split(pair("0", "2"), 2), ConfigError);  // a sends to b at once: they stay together
  try {
    split(pair("-1", "2"), 2);
    FAIL() << "a negative promise";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("test.yaml:2:"));
    EXPECT_THAT(e.what(), HasSubstr(": a: delay_ns: must be between 0 and 1e9 ns (it is the least time between the "
                                    "component acting and anything it sends leaving it), got -1"));
  }
}

TEST(Partition, GroupsStayWholeAtTheShallowestLevelThatFillsTheRanks) {
  // Groups g0..g3, two nodes each: 2 ranks split by group, never inside one.
  const core::Partition p = split(ring(8, "g"), 2);
  EXPECT_EQ(p.group_level, 1u);
  EXPECT_EQ(p.rank_of, (std::vector<unsigned>{0, 0, 0, 0, 1, 1, 1, 1}));
  // Five ranks, four groups: groups are let go (the 7 parts of the ring remain).
  const core::Partition q = split(ring(8, "g"), 5);
  EXPECT_EQ(q.group_level, 0u);
  EXPECT_EQ(q.nodes_per_rank, (std::vector<std::size_t>{1, 3, 1, 1, 2}));
}

TEST(Partition, AnAhbmSystemIsSplitBySipThenByCubeKeepingTheIoFabricWhole) {
  // The default system: two SIPs of 16 cubes; the switch and the IO chiplets are joined by links without latency.
  auto sys =
      test::build_system(test::shared_registry(), test::read_file(std::string(KBSIM_SOURCE_DIR) + "/topology.yaml"));
  const core::Elaboration& el = *sys->simulation().elaboration();
  for (const unsigned ranks : {2u, 4u}) {
    const core::Partition p = core::partition(el, ranks);
    EXPECT_EQ(p.group_level, ranks == 2 ? 1u : 2u) << "two SIPs: by SIP for 2 ranks, by cube for 4";
    for (const core::Link& l : el.links) {
      if (p.rank_of[l.src] != p.rank_of[l.dst]) {
        ASSERT_GT(l.latency, 0u) << el.nodes[l.src].id << " -> " << el.nodes[l.dst].id;
      }
    }
    // The nodes of one SIP (2 ranks) or one cube (4 ranks) share a rank.
    auto unit = [&](NodeIndex n) {
      const std::string& g = el.nodes[n].group;
      return ranks == 2 ? g.substr(0, g.find('/')) : g;
    };
    std::map<std::string, unsigned> rank_of_unit;
    for (NodeIndex n = 0; n < el.nodes.size(); ++n) {
      if (el.nodes[n].group.empty()) continue;
      auto [it, fresh] = rank_of_unit.try_emplace(unit(n), p.rank_of[n]);
      ASSERT_EQ(it->second, p.rank_of[n]) << el.nodes[n].id;
    }
    EXPECT_EQ(rank_of_unit.size(), ranks == 2 ? 2u : 32u);
    // Cut: the IO chiplets' links to the cubes (0.2 ns) and, by cube, UCIe between cubes (1 mm: 0.1 ns).
    EXPECT_EQ(p.lookahead, ns_to_ticks(ranks == 2 ? 0.2 : 0.1)) << core::describe(p);
  }
}

}  // namespace
}  // namespace kbsim
