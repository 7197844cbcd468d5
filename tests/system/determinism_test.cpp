// Determinism: the same command twice gives the same results.json (apart from
// wall-clock and host figures) and a byte-identical topology.json.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "harness.hpp"

namespace kbsim {
namespace {

struct RunFiles {
  std::string results;   ///< results.json text
  std::string topology;  ///< topology.json text
};

/// Run `kbsim <args> --out DIR` in a directory of its own and keep both files.
RunFiles run_into(const std::string& args, const std::string& name) {
  auto out = test::temp_dir() / name;
  auto r = test::run_kbsim(args + " --out " + out.string());
  EXPECT_EQ(r.code, 0) << r.err;
  RunFiles run{test::read_file(out / "results.json"), test::read_file(out / "topology.json")};
  EXPECT_FALSE(run.results.empty()) << "no results.json in " << out;
  EXPECT_FALSE(run.topology.empty()) << "no topology.json in " << out;
  return run;
}

std::string to_text(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return buf.GetString();
}

/// Parse results.json, check the wall-clock fields exist, then drop them.
void parse_deterministic_part(const std::string& text, rapidjson::Document& d) {
  d.Parse(text.c_str());
  ASSERT_FALSE(d.HasParseError()) << "results.json does not parse";
  ASSERT_TRUE(d.IsObject());
  for (const char* key : {"wall_time_s", "events_per_s", "host"}) {
    ASSERT_TRUE(d.HasMember(key)) << key;
    d.RemoveMember(key);
  }
}

/// Both runs, compared; returns the first run's document for further checks.
void expect_identical_runs(const std::string& args, rapidjson::Document& first) {
  RunFiles a = run_into(args, "a");
  RunFiles b = run_into(args, "b");
  EXPECT_EQ(a.topology, b.topology) << "topology.json differs between two identical runs";

  rapidjson::Document wall;
  wall.Parse(a.results.c_str());
  ASSERT_FALSE(wall.HasParseError());
  ASSERT_TRUE(wall.HasMember("events_per_s") && wall["events_per_s"].IsNumber());
  EXPECT_GT(wall["events_per_s"].GetDouble(), 0.0);
  EXPECT_GE(wall["wall_time_s"].GetDouble(), 0.0);

  rapidjson::Document db;
  parse_deterministic_part(a.results, first);
  parse_deterministic_part(b.results, db);
  EXPECT_TRUE(first == db) << "results differ apart from wall time:\n" << to_text(first) << "\n---\n" << to_text(db);
  // Byte-for-byte too, once the wall-clock fields are gone (member order is deterministic).
  EXPECT_EQ(to_text(first), to_text(db));
}

TEST(Determinism, MessageMeshTwiceGivesIdenticalResults) {
  rapidjson::Document d;
  expect_identical_runs("run --bench message-mesh --param x=8 --param y=8 --param stop_ns=2000", d);
  if (HasFatalFailure()) return;
  ASSERT_TRUE(d.HasMember("metrics"));
  const auto& m = d["metrics"];
  // 8 x 8 nodes, 4 events each in flight over 1 ns links: 4 x 8 x 8 deliveries per ns.
  EXPECT_EQ(m["delivered"].GetUint64(), 4u * 8u * 8u * 2000u);
  EXPECT_EQ(m["expected"].GetUint64(), 4u * 8u * 8u * 2000u);
  EXPECT_EQ(m["nodes"].GetUint64(), 64u);
  EXPECT_EQ(d["events"].GetUint64(), 4u * 8u * 8u * 2000u);
  EXPECT_EQ(d["sim_time_ns"].GetDouble(), 2000.0);
  EXPECT_STREQ(d["bench"].GetString(), "message-mesh");
  EXPECT_EQ(d["params"]["x"].GetInt64(), 8);
  EXPECT_EQ(d["params"]["stop_ns"].GetInt64(), 2000);
  // Per-node counts are part of what must repeat; they add up to the total.
  std::uint64_t sum = 0;
  for (const auto& c : d["components"].GetObject()) sum += c.value["received"].GetUint64();
  EXPECT_EQ(sum, 4u * 8u * 8u * 2000u);
}

TEST(Determinism, MessageMeshSeedChangesTheDistributionButNotTheTotal) {
  RunFiles a = run_into("run --bench message-mesh --param x=4 --param y=4 --param stop_ns=500 --param seed=1", "s1");
  RunFiles b = run_into("run --bench message-mesh --param x=4 --param y=4 --param stop_ns=500 --param seed=2", "s2");
  rapidjson::Document da, db;
  parse_deterministic_part(a.results, da);
  parse_deterministic_part(b.results, db);
  if (HasFatalFailure()) return;
  EXPECT_EQ(da["metrics"]["delivered"].GetUint64(), 4u * 16u * 500u);
  EXPECT_EQ(db["metrics"]["delivered"].GetUint64(), 4u * 16u * 500u);
  EXPECT_FALSE(da["components"] == db["components"]) << "another seed should route events differently";
}

TEST(Determinism, TrafficOnTheDefaultTopologyTwiceGivesIdenticalResults) {
  rapidjson::Document d;
  expect_identical_runs("run --bench traffic --topology " KBSIM_SOURCE_DIR "/examples/topologies/two_switch.yaml", d);
  if (HasFatalFailure()) return;
  const auto& m = d["metrics"];
  EXPECT_EQ(m["sent"].GetUint64(), m["received"].GetUint64());
  EXPECT_GT(m["received"].GetUint64(), 0u);
  EXPECT_GT(d["events"].GetUint64(), 0u);
}

}  // namespace
}  // namespace kbsim
