// The data pass and the timeline through the command line, as a user runs
// them: --verify-data passing and failing (a GEMM engine with wrong values),
// --trace loading as JSON with a track per PE engine whose slices match the
// op log (--op-log), and nothing written when a run fails.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <map>
#include <set>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

namespace fs = std::filesystem;
const std::string k128 = "run --bench matmul-composite --param M=128 --param K=256 --param N=128";

rapidjson::Document parse(const fs::path& p) {
  rapidjson::Document d;
  d.Parse(test::read_file(p).c_str());
  EXPECT_FALSE(d.HasParseError()) << p;
  return d;
}

TEST(DataCli, VerifyDataPassesOnTheComposite) {
  auto dir = test::temp_dir();
  auto r = test::run_kbsim(k128 + " --param epilogue=relu --verify-data --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("verified C (128, 128) f16 against Eigen: all 16384 elements"));
  EXPECT_THAT(r.out, HasSubstr("data pass  "));
  auto doc = parse(dir / "results.json");
  EXPECT_EQ(doc["data_pass"]["gemms"].GetUint64(), 1u);   // one composite: one GEMM of the whole output
  EXPECT_GT(doc["op_log"]["records"].GetUint64(), 256u);  // 64 tiles x several stages, plus commands
  EXPECT_EQ(doc["op_log"]["open_at_end"].GetUint64(), 0u);
}

TEST(DataCli, AWrongGemmEngineFailsVerificationWithTheFirstMismatch) {
  auto dir = test::temp_dir();
  test::write_file(dir / "c.yaml", "components:\n  test.wrong_gemm: { library: test_wrong_gemm, type: wrong_gemm }\n");
  const std::string swap = " --plugins " + (fs::path(KBSIM_TEST_PLUGIN_DIR) / "wrong_gemm").string() +
                           " --components " + (dir / "c.yaml").string() +
                           " --set cube.pe_template.components.pe_gemm.impl=test.wrong_gemm";
  // Timing alone cannot tell: the engine has pe_gemm's timing.
  auto timing = test::run_kbsim(k128 + swap + " --out " + (dir / "t").string());
  ASSERT_EQ(timing.code, 0) << timing.err;
  auto r = test::run_kbsim(k128 + swap + " --verify-data --out " + (dir / "v").string());
  EXPECT_EQ(r.code, 6) << r.err;
  EXPECT_THAT(r.err, HasSubstr("DATA_MISMATCH: C element (0, 0): got "));
  EXPECT_THAT(r.err, HasSubstr("(f16: rtol 0.001, atol 0.001)"));
  EXPECT_FALSE(fs::exists(dir / "v" / "results.json"));
}

TEST(DataCli, TraceHasATrackPerPeEngineWithSlicesMatchingTheOpLog) {
  auto dir = test::temp_dir();
  auto r = test::run_kbsim(k128 + " --param epilogue=relu --trace " + (dir / "t.json").string() + " --op-log " +
                           (dir / "ops.json").string() + " --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("ui.perfetto.dev"));
  auto trace = parse(dir / "t.json");
  auto ops = parse(dir / "ops.json");

  std::map<std::uint64_t, const rapidjson::Value*> by_seq;
  for (const auto& rec : ops["records"].GetArray()) by_seq[rec["seq"].GetUint64()] = &rec;
  std::map<int, std::string> tracks;  // tid -> name, for the PE 0 process
  std::set<std::string> flow_phases;
  std::size_t slices = 0;
  for (const auto& e : trace["traceEvents"].GetArray()) {
    const std::string ph = e["ph"].GetString();
    if (ph == "M" && std::string(e["name"].GetString()) == "thread_name")
      tracks[e["tid"].GetInt()] = e["args"]["name"].GetString();
    if (ph == "s" || ph == "t" || ph == "f") flow_phases.insert(ph);
    if (ph != "X") continue;
    ++slices;
    const rapidjson::Value& rec = *by_seq.at(e["args"]["seq"].GetUint64());
    EXPECT_EQ(std::string(e["name"].GetString()), rec["op_name"].GetString());
    EXPECT_NEAR(e["ts"].GetDouble() * 1000, rec["t_start"].GetDouble(), 1e-6);  // us vs ns
    EXPECT_NEAR(e["dur"].GetDouble() * 1000, rec["t_end"].GetDouble() - rec["t_start"].GetDouble(), 1e-6);
  }
  EXPECT_EQ(slices, by_seq.size());  // every record is a slice
  std::set<std::string> names;
  for (const auto& [tid, name] : tracks) names.insert(name);
  for (const char* engine : {"pe_scheduler", "pe_dma", "pe_fetch_store", "pe_gemm", "pe_math", "pe_tcm"})
    EXPECT_TRUE(names.count(engine)) << engine;
  EXPECT_EQ(flow_phases, (std::set<std::string>{"f", "s", "t"}));  // tiles can be followed
}

TEST(DataCli, TraceAndOpLogAreIdenticalAcrossRuns) {
  auto dir = test::temp_dir();
  std::string trace[2], ops[2];
  for (int i = 0; i < 2; ++i) {
    const auto t = dir / ("t" + std::to_string(i) + ".json"), o = dir / ("o" + std::to_string(i) + ".json");
    auto r = test::run_kbsim(k128 + " --verify-data --trace " + t.string() + " --op-log " + o.string() + " --out " +
                             dir.string());
    ASSERT_EQ(r.code, 0) << r.err;
    trace[i] = test::read_file(t);
    ops[i] = test::read_file(o);
  }
  EXPECT_EQ(trace[0], trace[1]);
  EXPECT_EQ(ops[0], ops[1]);
  EXPECT_THAT(ops[0], HasSubstr("\"host_write\""));  // the data pass's host writes are records too
}

TEST(DataCli, DataOptionsNeedABenchWithDataOperations) {
  auto dir = test::temp_dir();
  auto r = test::run_kbsim("run --bench message-mesh --trace " + (dir / "t.json").string() + " --out " + dir.string());
  EXPECT_EQ(r.code, 6);
  EXPECT_THAT(r.err, HasSubstr("NO_DATA_OPS"));
  EXPECT_FALSE(fs::exists(dir / "t.json"));
  EXPECT_FALSE(fs::exists(dir / "t.json.tmp"));
}

}  // namespace
}  // namespace kbsim
