// host-api-tour through the command line, on the default AHBM system: every
// step of a host program written the reference's way holds, with and without
// the data pass, and on every SIP at once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kbsim/testing_cli.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

TEST(HostApiTour, EveryStepHoldsAndTheKernelsValuesVerify) {
  testkit::CliResult r =
      testkit::run_kbsim("run --bench host-api-tour --verify-data --out " + (testkit::temp_dir() / "tour").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("copy X -> Y: 12288 bytes in"));
  EXPECT_THAT(r.out,
              HasSubstr("slices: filled Y[62:64, 0:1] = 7; a whole-tensor slice across shards is NOT_SUPPORTED"));
  EXPECT_THAT(r.out, HasSubstr("TCM: bias (1, 96) f32 in the TCM of 4 PEs, read back"));
  EXPECT_THAT(r.out, HasSubstr("kernel: verified Z = 0.5 * X on 4 PEs"));
  EXPECT_THAT(r.out, HasSubstr("tensor 'Z' (64, 96) f16 on sip0 [cube replicate x1, pe tiled_row_major x4, 4 shards]"));
  EXPECT_THAT(r.out, HasSubstr("scope: freed Z"));
}

TEST(HostApiTour, RunsOnEverySipAtOnce) {
  testkit::CliResult r = testkit::run_kbsim("run --bench host-api-tour --device all --param pes=8 --param M=40 --out " +
                                            (testkit::temp_dir() / "tour_all").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("sip 0: scope: freed Z"));
  EXPECT_THAT(r.out, HasSubstr("sip 1: scope: freed Z"));
}

}  // namespace
}  // namespace kbsim
