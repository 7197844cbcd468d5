// The sweep's worker processes (core::run_parallel): each runs many points in
// turn, so what its runs cache serves its later points; a worker that dies
// fails only the point it was running, and another takes its place.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <set>

#include "run/workers.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

TEST(SweepWorkers, WorkersRunManyPointsAndADeadOneFailsOnlyItsPoint) {
  const std::size_t n = 9;
  auto run_one = [](std::size_t i) {
    if (i == 4) std::raise(SIGKILL);  // a plugin's crash, say
    core::PointRecord r;
    r.result.ok = true;
    r.events = i * 10;
    r.sim_time = static_cast<Tick>(::getpid());  // which process ran it
    return r;
  };
  std::size_t told = 0;
  const auto out = core::run_parallel(
      n, 2, run_one, [](std::size_t i) { return "point " + std::to_string(i + 1); },
      [&](std::size_t done, std::size_t total) {
        EXPECT_EQ(done, ++told);
        EXPECT_EQ(total, n);
      });
  ASSERT_EQ(out.size(), n);
  EXPECT_EQ(told, n);
  std::set<Tick> processes;
  for (std::size_t i = 0; i < n; ++i) {
    if (i == 4) continue;
    EXPECT_TRUE(out[i].result.ok) << i;
    EXPECT_EQ(out[i].events, i * 10);
    processes.insert(out[i].sim_time);
  }
  EXPECT_FALSE(out[4].result.ok);
  EXPECT_THAT(out[4].result.error, HasSubstr("point 5: its worker process was killed by signal 9"));
  EXPECT_LE(processes.size(), 3u);  // two workers and the one that replaced the dead one, not a process per point
  EXPECT_EQ(processes.count(static_cast<Tick>(::getpid())), 0u);
}

}  // namespace
}  // namespace kbsim
