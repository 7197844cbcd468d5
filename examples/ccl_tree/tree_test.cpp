// tree_allreduce's wiring in isolation: every member but the root has a
// parent, every parent points back at its children, and nothing else.
#include "tree.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace {

TEST(TreeAllreduce, EveryEdgeIsWiredBothWays) {
  kbsim::ccl::SystemShape s;
  s.sips = 2;
  s.sip_w = 2;
  s.cube_w = s.cube_h = 4;
  s.pes_per_cube = 8;
  const kbsim::Params none;
  const auto wires = tree::TreeAllreduce().wiring({s, 2, none});
  EXPECT_EQ(wires.size(), 2u * 31);  // 32 members: 31 edges, each wired both ways
  std::map<std::tuple<unsigned, unsigned, std::string>, std::tuple<unsigned, unsigned>> at;
  for (const auto& w : wires) at[{w.from.sip, w.from.cube, w.dir}] = {w.to.sip, w.to.cube};
  EXPECT_EQ(at.size(), wires.size()) << "a direction wired twice";
  // Member 17 (SIP 1, cube 1): parent 8 (SIP 0, cube 8), children 35 and 36 do not exist.
  EXPECT_EQ((at[{1, 1, "parent"}]), (std::tuple<unsigned, unsigned>{0, 8}));
  EXPECT_EQ((at[{0, 8, "child0"}]), (std::tuple<unsigned, unsigned>{1, 1}));
  EXPECT_EQ((at[{0, 8, "child1"}]), (std::tuple<unsigned, unsigned>{1, 2}));
  EXPECT_FALSE(at.count({1, 1, "child0"}));
  EXPECT_FALSE(at.count({0, 0, "parent"}));
}

}  // namespace
