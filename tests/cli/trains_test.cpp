// Flit trains advanced as a whole change how many events the engine runs, nothing else: the AHBM model's C++ benches
// write the same results.json with trains as flit by flit (KBSIM_FLIT_BY_FLIT=1), apart from the host's figures,
// and their trace and op log byte for byte (docs/architecture.md, "Flit trains advanced as a whole").
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <filesystem>
#include <string>

#include "harness.hpp"

namespace kbsim {
namespace {

namespace fs = std::filesystem;

/// results.json without the host's figures, and its engine's event count.
std::pair<std::string, std::uint64_t> read_results(const fs::path& file) {
  rapidjson::Document d;
  d.Parse(test::read_file(file).c_str());
  EXPECT_FALSE(d.HasParseError()) << file;
  if (d.HasParseError()) return {};
  const std::uint64_t engine = d["host"]["engine_events"].GetUint64();
  for (const char* key : {"wall_time_s", "events_per_s", "host"}) d.RemoveMember(key);
  if (d.HasMember("data_pass")) d["data_pass"].RemoveMember("wall_time_s");
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  d.Accept(w);
  return {out.GetString(), engine};
}

struct Case {
  const char* name;
  const char* args;
};

class Trains : public ::testing::TestWithParam<Case> {};

TEST_P(Trains, GiveTheResultsOfTheFlitByFlitModelWithFewerEvents) {
  const fs::path dir = test::temp_dir();
  std::pair<std::string, std::uint64_t> got[2];
  std::string logs[2];
  for (int flat = 0; flat < 2; ++flat) {
    const fs::path out = dir / (flat ? "flat" : "trains");
    fs::create_directories(out);
    const std::string args = std::string("run ") + GetParam().args + " --trace " + (out / "trace.json").string() +
                             " --op-log " + (out / "oplog.json").string() + " --out " + out.string();
    const auto r = test::run_kbsim_with(flat ? "env KBSIM_FLIT_BY_FLIT=1" : "", args);
    ASSERT_EQ(r.code, 0) << r.err;
    got[flat] = read_results(out / "results.json");
    logs[flat] = test::read_file(out / "trace.json") + test::read_file(out / "oplog.json");
  }
  EXPECT_EQ(got[0].first, got[1].first);
  EXPECT_TRUE(logs[0] == logs[1]) << "the trace or the op log differs";
  EXPECT_LT(got[0].second, got[1].second) << "the engine ran no fewer events with trains";
}

INSTANTIATE_TEST_SUITE_P(
    Benches, Trains,
    ::testing::Values(Case{"composite", "--bench matmul-composite --param M=256 --param K=256 --param N=256"},
                      Case{"allreduce", "--bench ccl-allreduce --param n_elem=16384 --verify-data"},
                      Case{"tp_mlp", "--bench tp-mlp"}, Case{"gpt3_qkv", "--bench gpt3-qkv"}),
    [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace kbsim
