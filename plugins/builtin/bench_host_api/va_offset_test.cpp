// va-offset-verify through the command line, on the default AHBM system: with
// the launch's dim remap every PE finds and checks its piece; without it the
// kernel's arithmetic on global dims misses, and the run fails naming the PE.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kbsim/errors.hpp"
#include "kbsim/testing_cli.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

TEST(VaOffsetVerify, EveryPeFindsItsPieceWithTheRemappedDims) {
  auto dir = testkit::temp_dir() / "va_offset";
  testkit::CliResult r = testkit::run_kbsim("run --bench va-offset-verify --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("8 PEs each found their (32, 32) piece of X (64, 128) and read it back"));
  EXPECT_THAT(testkit::read_file(dir / "results.json"), HasSubstr("\"elements_checked\": 8192"));
  std::filesystem::remove_all(dir);
}

TEST(VaOffsetVerify, OtherShapesAndSplitsToo) {
  testkit::CliResult r =
      testkit::run_kbsim("run --bench va-offset-verify --param M=48 --param N=24 --param cubes=3 --param pes=6 --out " +
                         (testkit::temp_dir() / "va_offset2").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("18 PEs each found their (16, 4) piece of X (48, 24)"));
}

TEST(VaOffsetVerify, WithoutTheRemapTheKernelMissesAndTheRunFailsNamingThePe) {
  testkit::CliResult r = testkit::run_kbsim("run --bench va-offset-verify --param remap=false --out " +
                                            (testkit::temp_dir() / "va_offset3").string());
  EXPECT_EQ(r.code, static_cast<int>(ExitCode::kSim));
  EXPECT_THAT(r.err, HasSubstr("computed its piece at VA"));
}

TEST(VaOffsetVerify, ShapesThatDoNotDivideAreRefused) {
  testkit::CliResult r = testkit::run_kbsim("run --bench va-offset-verify --param N=130");
  EXPECT_EQ(r.code, static_cast<int>(ExitCode::kConfig));
  EXPECT_THAT(r.err, HasSubstr("N"));
}

}  // namespace
}  // namespace kbsim
