// Golden outputs: the commands users rely on (the probe, the pe-dma-perf bench,
// the verified 512^3 composite GEMM with its trace and op log, message-mesh and
// a verified allreduce with its op log) give the
// same bytes as when tests/cli/golden/manifest.txt was recorded, apart from
// host figures (wall time, events/s, memory) and where the source tree lives.
// The manifest was recorded before the AHBM model moved out of the core, so
// this test is what shows that the move changed nothing for users. An
// intended change of results re-records it (tests/cli/golden/normalize.py).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>

#include "harness.hpp"

namespace kbsim {
namespace {

/// The manifest's normalization: no host figures, the source directory as <src>.
std::string normalize(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  bool skip = false, first = true;
  const std::string src = KBSIM_SOURCE_DIR;
  while (std::getline(in, line)) {
    if (skip) {
      skip = line.find('}') == std::string::npos;
      continue;
    }
    if (line.find("\"host\": {") != std::string::npos) {
      skip = true;
      continue;
    }
    if (line.find("\"wall_time_s\":") != std::string::npos || line.find("\"events_per_s\":") != std::string::npos ||
        line.find("\"abi_version\":") != std::string::npos)
      continue;
    for (std::size_t at = line.find(src); at != std::string::npos; at = line.find(src, at + 5))
      line.replace(at, src.size(), "<src>");
    if (!first) out += '\n';
    out += line;
    first = false;
  }
  if (!text.empty() && text.back() == '\n') out += '\n';
  return out;
}

std::string fnv1a(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::map<std::string, std::string> manifest() {
  std::ifstream in(std::string(KBSIM_SOURCE_DIR) + "/tests/cli/golden/manifest.txt");
  std::map<std::string, std::string> m;
  std::string file, hash;
  while (in >> file >> hash) m[file] = hash;
  return m;
}

void expect_golden(const std::filesystem::path& dir, const std::string& file) {
  const auto m = manifest();
  ASSERT_TRUE(m.count(file)) << file << " is not in the manifest";
  EXPECT_EQ(fnv1a(normalize(test::read_file(dir / file))), m.at(file))
      << file << " differs from the recorded output (see tests/cli/golden/normalize.py)";
}

TEST(Golden, ProbeTablesAndJsonAreUnchanged) {
  auto dir = test::temp_dir();
  auto text = test::run_kbsim("probe");
  ASSERT_EQ(text.code, 0) << text.err;
  test::write_file(dir / "probe.txt", text.out);
  auto json = test::run_kbsim("probe --json");
  ASSERT_EQ(json.code, 0) << json.err;
  test::write_file(dir / "probe.json", json.out);
  expect_golden(dir, "probe.txt");
  expect_golden(dir, "probe.json");
}

TEST(Golden, PeDmaPerfResultsAndTopologyAreUnchanged) {
  auto dir = test::temp_dir();
  auto r = test::run_kbsim("run --bench pe-dma-perf --out " + (dir / "pdp").string());
  ASSERT_EQ(r.code, 0) << r.err;
  expect_golden(dir, "pdp/results.json");
  expect_golden(dir, "pdp/topology.json");
}

TEST(Golden, VerifiedCompositeResultsTraceAndOpLogAreUnchanged) {
  auto dir = test::temp_dir();
  const std::string mm = (dir / "mm").string();
  std::filesystem::create_directories(mm);
  auto r = test::run_kbsim(
      "run --bench matmul-composite --param M=512 --param K=512 --param N=512 --verify-data "
      "--trace " +
      mm + "/trace.json --op-log " + mm + "/oplog.json --out " + mm);
  ASSERT_EQ(r.code, 0) << r.err;
  expect_golden(dir, "mm/results.json");
  expect_golden(dir, "mm/trace.json");
  expect_golden(dir, "mm/oplog.json");
}

// The engine's own workload and a verified collective (IPCQ, the distributed runtime, the data pass): what a faster
// engine or a new event order must leave byte for byte as it was.
TEST(Golden, MessageMeshAndAVerifiedAllreduceAreUnchanged) {
  auto dir = test::temp_dir();
  auto mesh = test::run_kbsim("run --bench message-mesh --param x=8 --param y=8 --param stop_ns=2000 --out " +
                              (dir / "mesh").string());
  ASSERT_EQ(mesh.code, 0) << mesh.err;
  expect_golden(dir, "mesh/results.json");
  const std::string ar = (dir / "ar").string();
  std::filesystem::create_directories(ar);
  auto r = test::run_kbsim("run --bench ccl-allreduce --param n_elem=4096 --verify-data --op-log " + ar +
                           "/oplog.json --out " + ar);
  ASSERT_EQ(r.code, 0) << r.err;
  expect_golden(dir, "ar/results.json");
  expect_golden(dir, "ar/oplog.json");
}

TEST(Golden, TheNormalizationCanFail) {
  // A changed figure changes the hash: the test is not blind.
  const std::string a = "{\n  \"sim_time_ns\": 10,\n  \"wall_time_s\": 1.5\n}\n";
  const std::string b = "{\n  \"sim_time_ns\": 11,\n  \"wall_time_s\": 1.5\n}\n";
  const std::string c = "{\n  \"sim_time_ns\": 10,\n  \"wall_time_s\": 9.0\n}\n";
  EXPECT_NE(fnv1a(normalize(a)), fnv1a(normalize(b)));
  EXPECT_EQ(fnv1a(normalize(a)), fnv1a(normalize(c)));
}

}  // namespace
}  // namespace kbsim
