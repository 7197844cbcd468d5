// The GQA attention panels through the command line: each passes the data
// pass's check against attention computed directly, decode panels run exactly
// 2 GEMMs per rank, and the op-log counts follow from the ring's structure.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

#include "kbsim/testing_cli.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

struct Panel {
  std::string name;
  unsigned ranks;
  bool decode;
};
void PrintTo(const Panel& p, std::ostream* os) { *os << p.name; }

rapidjson::Document run_panel(const Panel& p, const std::string& extra = "") {
  const auto dir = testkit::temp_dir();
  const testkit::CliResult r =
      testkit::run_kbsim("run --bench gqa-attention --param panel=" + p.name +
                         " --param scale=validation --verify-data --out " + dir.string() + extra);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("verified:"));
  rapidjson::Document d;
  d.Parse(testkit::read_file(dir / "results.json").c_str());
  return d;
}

class GqaPanels : public ::testing::TestWithParam<Panel> {};

TEST_P(GqaPanels, PassesVerifyDataWithTheRingsOpCounts) {
  const Panel& p = GetParam();
  rapidjson::Document d = run_panel(p);
  ASSERT_TRUE(d.IsObject());
  const auto& c = d["metrics"]["op_counts"];
  const std::uint64_t n = p.ranks;
  if (p.decode) {
    EXPECT_EQ(c["gemm"].GetUint64(), 2 * n);  // one partial attention per rank
    // (m, l, o) of every rank passed n-1 times around the ring.
    EXPECT_EQ(c["ipcq_send"].GetUint64(), 3 * n * (n - 1));
  } else {
    EXPECT_EQ(c["gemm"].GetUint64(), 2 * n * n);             // every rank attends to every K/V block
    EXPECT_EQ(c["ipcq_send"].GetUint64(), 2 * n * (n - 1));  // K and V blocks rotate n-1 times
  }
  EXPECT_EQ(c["ipcq_recv"].GetUint64(), c["ipcq_send"].GetUint64());
  EXPECT_EQ(c["dma_read"].GetUint64(), 3 * n);  // Q, K and V of each rank
  EXPECT_EQ(c["dma_write"].GetUint64(), n);     // its output
  EXPECT_GT(d["metrics"]["latency_ns"].GetDouble(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Panels, GqaPanels,
                         ::testing::Values(Panel{"single_user_prefill", 8, false},
                                           Panel{"multi_user_prefill", 4, false}, Panel{"single_user_decode", 8, true},
                                           Panel{"multi_user_decode", 4, true}),
                         [](const auto& info) { return info.param.name; });

TEST(GqaAttention, RefusesAnUnknownPanelAndASequenceTheRanksDoNotDivide) {
  const auto dir = testkit::temp_dir();
  auto bad = testkit::run_kbsim("run --bench gqa-attention --param panel=triple_user --out " + dir.string());
  EXPECT_EQ(bad.code, 3);
  EXPECT_THAT(bad.err, HasSubstr("panel"));
  auto odd = testkit::run_kbsim("run --bench gqa-attention --param s_kv=100 --out " + dir.string());
  EXPECT_EQ(odd.code, 3);
  EXPECT_THAT(odd.err, HasSubstr("multiple of the panel's 8 ranks"));
}

}  // namespace
}  // namespace kbsim
