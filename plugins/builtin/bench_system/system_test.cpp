// The generic bench: any topology runs until nothing is left to do, or until
// a time, and results.json holds every component's statistics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <string>

#include "kbsim/testing_cli.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

const std::string kTwoSwitch = "run --bench system --topology " KBSIM_SOURCE_DIR "/examples/topologies/two_switch.yaml";

rapidjson::Document results(const std::filesystem::path& out) {
  rapidjson::Document d;
  d.Parse(testkit::read_file(out / "results.json").c_str());
  return d;
}

TEST(SystemBench, RunsAnyTopologyUntilNothingIsLeft) {
  auto out = testkit::temp_dir() / "system_all";
  auto r = testkit::run_kbsim(kTwoSwitch + " --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("nothing left to do"));
  auto d = results(out);
  EXPECT_TRUE(d["metrics"]["idle"].GetBool());
  // The host's packets all reached the memory endpoint: the statistics of every component are there.
  EXPECT_EQ(d["components"]["host"]["sent"].GetUint64(), d["components"]["mem"]["received"].GetUint64());
  EXPECT_GT(d["components"]["mem"]["received"].GetUint64(), 0u);
  EXPECT_TRUE(d["components"].HasMember("sw0"));
}

TEST(SystemBench, StopsAtAGivenTime) {
  auto out = testkit::temp_dir() / "system_until";
  auto r = testkit::run_kbsim(kTwoSwitch + " --param until_ns=20 --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  auto d = results(out);
  EXPECT_FALSE(d["metrics"]["idle"].GetBool());
  EXPECT_DOUBLE_EQ(d["metrics"]["sim_time_ns"].GetDouble(), 20.0);
  EXPECT_THAT(r.out, HasSubstr("stopped at until_ns with work left"));
}

}  // namespace
}  // namespace kbsim
