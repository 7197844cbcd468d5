// va-offset-verify through the command line, on the default AHBM system: with
// the launch's dim remap every PE finds and checks its piece; without it the
// kernel's arithmetic on global dims misses, and the run fails naming the PE.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kbsim/errors.hpp"
#include "kbsim/testing_cli.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

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

// --device (docs/model.md, "Devices"): a single-device bench once per selected SIP, in one simulation.
TEST(Device, AllRunsTheBenchOncePerSipWithResultsPerSip) {
  auto dir = testkit::temp_dir() / "va_offset_all";
  testkit::CliResult r = testkit::run_kbsim("run --bench va-offset-verify --device all --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("sip 0: 8 PEs each found their (32, 32) piece"));
  EXPECT_THAT(r.out, HasSubstr("sip 1: 8 PEs each found their (32, 32) piece"));
  const std::string results = testkit::read_file(dir / "results.json");
  EXPECT_THAT(results, HasSubstr("\"device\": \"all\""));
  EXPECT_THAT(results, HasSubstr("\"sip1\": {"));
  std::filesystem::remove_all(dir);
}

TEST(Device, SipNRunsOnThatSipOnly) {
  auto dir = testkit::temp_dir() / "va_offset_sip1";
  testkit::CliResult r = testkit::run_kbsim("run --bench va-offset-verify --device sip:1 --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("sip 1:")));  // one device: the results are the bench's own
  const std::string results = testkit::read_file(dir / "results.json");
  EXPECT_THAT(results, HasSubstr("\"device\": \"sip:1\""));
  EXPECT_THAT(results, HasSubstr("\"sip1.cube0.pe0.pe_cpu\""));
  EXPECT_THAT(results, Not(HasSubstr("\"sip0.cube0.pe0.pe_cpu\"")));  // only what ran is reported
  std::filesystem::remove_all(dir);
}

TEST(Device, ABadSelectorIsAUsageError) {
  for (const char* bad : {"sip:2", "sip:x", "gpu", "sip:"}) {
    testkit::CliResult r = testkit::run_kbsim(std::string("run --bench va-offset-verify --device ") + bad);
    EXPECT_EQ(r.code, static_cast<int>(ExitCode::kUsage)) << bad;
    EXPECT_THAT(r.err, HasSubstr(std::string("--device ") + bad + ": ")) << bad;
  }
}

}  // namespace
}  // namespace kbsim
