// kbsim::Fifo (sdk/include/kbsim/fifo.hpp): first in, first out across the ring's wrap and growth; insertion at a
// position; a popped element's resources released at once.
#include "kbsim/fifo.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace kbsim {
namespace {

TEST(Fifo, KeepsTheOrderAcrossWrappingAndGrowing) {
  Fifo<int> q;
  EXPECT_TRUE(q.empty());
  int next_in = 0, next_out = 0;
  // Push three, pop two, over and over: the ring wraps and grows while elements are queued.
  for (int round = 0; round < 50; ++round) {
    for (int k = 0; k < 3; ++k) q.push_back(next_in++);
    for (int k = 0; k < 2; ++k) {
      ASSERT_EQ(q.front(), next_out++);
      q.pop_front();
    }
  }
  EXPECT_EQ(q.size(), 50u);
  for (std::size_t i = 0; i < q.size(); ++i) EXPECT_EQ(q[i], next_out + static_cast<int>(i));
  while (!q.empty()) {
    EXPECT_EQ(q.front(), next_out++);
    q.pop_front();
  }
  EXPECT_EQ(next_out, next_in);
}

TEST(Fifo, InsertsAtAPositionAndBuildsInPlace) {
  struct Job {
    std::string name;
    int n = 0;
  };
  Fifo<Job> q;
  q.emplace_back("a", 1);
  q.emplace_back("c", 3);
  q.insert(1, {"b", 2});  // behind the one in flight
  q.insert(0, {"z", 0});
  q.insert(q.size(), {"d", 4});
  std::string order;
  for (std::size_t i = 0; i < q.size(); ++i) order += q[i].name + std::to_string(q[i].n);
  EXPECT_EQ(order, "z0a1b2c3d4");
}

TEST(Fifo, APoppedElementIsReleasedAtOnce) {
  Fifo<std::shared_ptr<int>> q;
  auto held = std::make_shared<int>(7);
  q.push_back(held);
  q.push_back(std::make_shared<int>(8));
  EXPECT_EQ(held.use_count(), 2);
  q.pop_front();
  EXPECT_EQ(held.use_count(), 1);
  EXPECT_EQ(*q.front(), 8);
}

}  // namespace
}  // namespace kbsim
