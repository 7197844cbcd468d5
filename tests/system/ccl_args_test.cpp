// A CCL algorithm's kernel arguments travel by name (kbsim/pe/ccl.hpp): what launch() packs, the kernel reads back
// field for field after the runtime's four, and a launch with other arguments is the kernel's error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "kbsim/pe/ccl.hpp"

namespace kbsim {
namespace {

struct Own {
  std::int64_t big = 0;
  double share = 0.0;
  std::int64_t last = 0;
  static constexpr auto fields = std::make_tuple(&Own::big, &Own::share, &Own::last);
};

tl::Args launched(const std::vector<ccl::Scalar>& own) {
  std::vector<tl::Args::Value> v{tl::TensorArg{}, std::int64_t{3}, std::int64_t{4}, std::int64_t{96}};
  for (const auto& s : own) std::visit([&](auto x) { v.emplace_back(x); }, s);
  return tl::Args(std::move(v));
}

TEST(CclArgs, WhatLaunchPacksTheKernelReadsByName) {
  const Own sent{std::numeric_limits<std::int64_t>::max(), 0.375, -7};
  const tl::Args args = launched(ccl::pack(sent));
  const ccl::KernelArgs<Own> a(args);
  EXPECT_EQ(a.rank, 3u);
  EXPECT_EQ(a.world, 4u);
  EXPECT_EQ(a.n_elem, 96);
  EXPECT_EQ(a.own.big, std::numeric_limits<std::int64_t>::max());  // whole: no trip through a double
  EXPECT_EQ(a.own.share, 0.375);
  EXPECT_EQ(a.own.last, -7);
}

TEST(CclArgs, ALaunchWithOtherArgumentsIsTheKernelsError) {
  const tl::Args args = launched({std::int64_t{1}});
  try {
    ccl::KernelArgs<Own> a(args);
    FAIL() << "accepted 5 arguments";
  } catch (const tl::Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("the kernel takes 7 arguments (tensor, rank, world, n_elem and its "
                                               "algorithm's 3), 5 given"));
  }
}

}  // namespace
}  // namespace kbsim
