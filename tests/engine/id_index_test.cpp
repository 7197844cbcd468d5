// The index of a system's nodes by id (core/component/id_index.hpp), which
// elaboration and find_node use.
#include "component/id_index.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace kbsim::core {
namespace {

std::vector<std::string_view> views(const std::vector<std::string>& ids) { return {ids.begin(), ids.end()}; }

TEST(IdIndex, FindsEveryNodeOfALargeSystemAndNothingElse) {
  std::vector<std::string> ids;
  for (int s = 0; s < 4; ++s)
    for (int p = 0; p < 5000; ++p) ids.push_back("sip" + std::to_string(s) + ".cube0.pe" + std::to_string(p));
  const std::vector<std::string_view> v = views(ids);
  IdIndex index;
  index.reserve(v.size());
  for (NodeIndex i = 0; i < v.size(); ++i) ASSERT_EQ(index.insert(i, v), kNoNode) << ids[i];
  for (NodeIndex i = 0; i < v.size(); ++i) ASSERT_EQ(index.find(ids[i], v), i) << ids[i];
  EXPECT_EQ(index.find("sip4.cube0.pe0", v), kNoNode);
  EXPECT_EQ(index.find("sip0.cube0.pe", v), kNoNode);  // a prefix of ids is none of them
  EXPECT_EQ(index.find("", v), kNoNode);
}

TEST(IdIndex, ARepeatedIdNamesTheNodeThatHadItFirst) {
  const std::vector<std::string> ids = {"a", "b", "c", "b"};
  const std::vector<std::string_view> v = views(ids);
  IdIndex index;
  index.reserve(v.size());
  EXPECT_EQ(index.insert(0, v), kNoNode);
  EXPECT_EQ(index.insert(1, v), kNoNode);
  EXPECT_EQ(index.insert(2, v), kNoNode);
  EXPECT_EQ(index.insert(3, v), 1u);
  EXPECT_EQ(index.find("b", v), 1u);
}

TEST(IdIndex, AnEmptyIndexFindsNothing) {
  const IdIndex index;
  EXPECT_EQ(index.find("a", {}), kNoNode);
  IdIndex none;
  none.reserve(0);
  EXPECT_EQ(none.find("a", {}), kNoNode);
}

}  // namespace
}  // namespace kbsim::core
