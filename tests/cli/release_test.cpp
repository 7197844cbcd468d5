// A bench releasing the systems it is done with (BenchContext::release): its results are those of the systems
// kept, what a released system still answers, and using one afterwards is the bench's error, named.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <filesystem>
#include <string>

#include "harness.hpp"

namespace kbsim {
namespace {

test::CliResult release_bench(const std::string& params, const std::filesystem::path& out) {
  const std::string plugins = (std::filesystem::path(KBSIM_TEST_PLUGIN_DIR) / "release_bench").string();
  return test::run_kbsim("run --plugins " + plugins + " --bench release " + params + " --out " + out.string());
}

/// results.json's `key` section as text.
std::string section(const rapidjson::Document& d, const char* key) {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  d[key].Accept(w);
  return b.GetString();
}

TEST(Release, AReleasedSystemReportsWhatAKeptOneDoes) {
  const auto released = test::temp_dir() / "release_yes", kept = test::temp_dir() / "release_no";
  auto a = release_bench("", released);
  ASSERT_EQ(a.code, 0) << a.err;
  auto b = release_bench("--param release=false", kept);
  ASSERT_EQ(b.code, 0) << b.err;
  rapidjson::Document r, k;
  r.Parse(test::read_file(released / "results.json").c_str());
  k.Parse(test::read_file(kept / "results.json").c_str());
  EXPECT_EQ(r["topology"]["systems"].GetUint(), 2u);
  for (const char* key : {"components", "links", "sim_time_ns", "events"})
    EXPECT_EQ(section(r, key), section(k, key)) << key;
  // Both systems' statistics and link traffic are there, and what the bench read after releasing them.
  EXPECT_TRUE(r["components"].HasMember("s0/sip0.cube0.hbm_ctrl.pe0"));
  EXPECT_TRUE(r["components"].HasMember("s1/sip0.cube0.hbm_ctrl.pe0"));
  EXPECT_GT(r["links"].Size(), 0u);
  const auto& m = r["metrics"];
  EXPECT_EQ(section(r, "metrics"), section(k, "metrics"));
  EXPECT_EQ(m["bursts_256"].GetUint64(), 1u);
  EXPECT_EQ(m["bursts_512"].GetUint64(), 2u);
  EXPECT_GT(m["links_used_256"].GetUint64(), 0u);
  EXPECT_GT(m["end_ns_512"].GetDouble(), 0.0);
  EXPECT_TRUE(m["idle_256"].GetBool());
  std::filesystem::remove_all(released);
  std::filesystem::remove_all(kept);
}

TEST(Release, UsingAReleasedSystemIsTheBenchsError) {
  const auto out = test::temp_dir() / "release_misuse";
  const std::string used = "kbsim: error: RELEASED: bench 'release' called ";
  const std::string what = " on a system it released (BenchContext::release), which keeps only its results\n";
  for (auto [misuse, call] : {std::pair{"run", "run_until()"},
                              {"component", "component()"},
                              {"service", "find_service()"},
                              {"again", "release()"}}) {
    auto r = release_bench(std::string("--param misuse=") + misuse, out);
    EXPECT_EQ(r.code, 6) << misuse;
    EXPECT_EQ(r.err, used + call + what) << misuse;
  }
  auto configured = release_bench("--param misuse=configured", out);
  EXPECT_EQ(configured.code, 6);
  EXPECT_EQ(configured.err,
            "kbsim: error: RELEASED: bench 'release' released configured(): release() takes a system the bench "
            "built with build()\n");
  EXPECT_FALSE(std::filesystem::exists(out / "results.json")) << "a failed run writes nothing";
}

}  // namespace
}  // namespace kbsim
