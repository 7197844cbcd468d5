// The sweep bench through the command line: points from a file, run by the point runner in worker processes, a
// failed point reported beside the others, and a bad points file a configuration error naming file:line:column.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "kbsim/errors.hpp"
#include "kbsim/testing_cli.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

TEST(Sweep, RunsEveryPointOfTheFileAndReportsAFailedOneBesideTheOthers) {
  const auto dir = testkit::temp_dir() / "sweep";
  std::filesystem::create_directories(dir);
  testkit::write_file(dir / "points.yaml",
                      "points:\n"
                      "  - bench: matmul-composite\n"
                      "    params: { M: 32, K: 32, N: 32 }\n"
                      "  - bench: matmul-composite\n"
                      "    params: { M: 64, K: 32, N: 32 }\n"
                      "    set: { system.sips.count: 1 }\n"
                      "  - bench: matmul-composite\n"
                      "    params: { M: 0 }\n");
  testkit::CliResult r = testkit::run_kbsim("run --bench sweep -j 2 --param points=" + (dir / "points.yaml").string() +
                                            " --out " + (dir / "out").string());
  EXPECT_EQ(r.code, static_cast<int>(ExitCode::kBench)) << r.err;
  EXPECT_THAT(r.out, HasSubstr("3 points, 1 failed (points.json)"));
  EXPECT_THAT(r.err, HasSubstr("POINTS_FAILED: 1 of 3 points of bench sweep failed"));
  rapidjson::Document d;
  d.Parse(testkit::read_file(dir / "out" / "points.json").c_str());
  ASSERT_FALSE(d.HasParseError());
  const auto& points = d["points"];
  ASSERT_EQ(points.Size(), 3u);
  EXPECT_TRUE(points[0]["ok"].GetBool());
  EXPECT_EQ(points[1]["config"]["set"][0].GetString(), std::string("system.sips.count=1"));
  EXPECT_EQ(points[1]["metrics"]["M"].GetInt64(), 64);
  EXPECT_FALSE(points[2]["ok"].GetBool());
  EXPECT_THAT(points[2]["error"].GetString(), HasSubstr("M"));
}

TEST(Sweep, ABadPointsFileIsAConfigErrorNamingWhere) {
  const auto dir = testkit::temp_dir() / "sweep_bad";
  std::filesystem::create_directories(dir);
  testkit::write_file(dir / "p.yaml", "points:\n  - bench: matmul-composite\n    parms: { M: 32 }\n");
  testkit::CliResult r = testkit::run_kbsim("run --bench sweep --param points=" + (dir / "p.yaml").string());
  EXPECT_EQ(r.code, static_cast<int>(ExitCode::kConfig));
  EXPECT_THAT(r.err, HasSubstr("p.yaml:3:5: unknown key 'parms' in a point (closest: params)"));
  r = testkit::run_kbsim("run --bench sweep");
  EXPECT_EQ(r.code, static_cast<int>(ExitCode::kConfig));
  EXPECT_THAT(r.err, HasSubstr("points"));
}

}  // namespace
}  // namespace kbsim
