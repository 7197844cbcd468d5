// A bench running another bench (BenchContext::run_bench): the metrics it
// reads, the work counted in the summary, and the errors of a bad nested run,
// named as the calling bench's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <string>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

test::CliResult nested(const std::string& params, const std::filesystem::path& out) {
  const std::string plugins = (std::filesystem::path(KBSIM_TEST_PLUGIN_DIR) / "nested_bench").string();
  return test::run_kbsim("run --plugins " + plugins + " --bench nested " + params + " --out " + out.string());
}

TEST(NestedBench, ReadsTheOtherBenchsMetricsAndCountsItsWork) {
  auto out = test::temp_dir() / "nested_ok";
  auto r = nested("--set system.routing=latency", out);
  ASSERT_EQ(r.code, 0) << r.err;
  rapidjson::Document d;
  d.Parse(test::read_file(out / "results.json").c_str());
  EXPECT_EQ(std::string(d["metrics"]["inner_routing"].GetString()), "latency");  // the caller's --set reaches it
  EXPECT_GT(d["events"].GetUint64(), 0u);  // the nested probe's events; the bench's own system ran none
  std::filesystem::remove_all(out);
}

TEST(NestedBench, ABenchsOwnFaultIsNamedAsThePlugins) {
  auto r = nested("--param bench=!throw", test::temp_dir() / "nested_throw");
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_EQ(r.err, "kbsim: error: bench 'nested' (library test_nested_bench) failed: the bench's own bug\n");
}

TEST(NestedBench, ABadNestedRunIsTheCallingBenchsError) {
  auto out = test::temp_dir() / "nested_bad";
  auto unknown = nested("--param bench=nosuch", out);
  EXPECT_EQ(unknown.code, 6);
  EXPECT_THAT(unknown.err, HasSubstr("NESTED_RUN: bench 'nested' ran bench 'nosuch': "));
  auto refused = nested("--param bench=pe-dma-perf --param arg=op=copy", out);
  EXPECT_EQ(refused.code, 6);
  EXPECT_THAT(refused.err, HasSubstr("NESTED_RUN: bench 'nested' ran bench 'pe-dma-perf': "));
  EXPECT_THAT(refused.err, HasSubstr("parameter 'op' must be write or read"));
  auto failed = nested(
      "--param arg=tolerance_pct=5 --set cube.components.hbm_ctrl.attrs.efficiency=0.8 "
      "--param bench=fidelity",
      out);
  EXPECT_EQ(failed.code, 6);
  EXPECT_THAT(failed.err, HasSubstr("FIDELITY: bench 'nested' ran bench 'fidelity': per-PE local HBM bandwidth"));
  auto itself = nested("--param bench=nested", out);
  EXPECT_EQ(itself.code, 6);
  EXPECT_THAT(itself.err, HasSubstr("NESTING: "));
  EXPECT_THAT(itself.err, HasSubstr("more than 4 levels deep"));
  EXPECT_FALSE(std::filesystem::exists(out / "results.json")) << "a failed run writes nothing";
}

}  // namespace
}  // namespace kbsim
