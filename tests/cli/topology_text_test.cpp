// `kbsim topology --dot FILE`, `--mermaid FILE` and `--json FILE`: the resolved graph as Graphviz DOT, as a Mermaid
// flowchart (grouped by the nodes' group paths) and as JSON, written whole or not at all, the same text every time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

/// A small explicit topology: a node of no group, nested groups a and a/b, a group c; a bidirectional edge, an
/// edge of another kind without a bandwidth limit, a fractional bandwidth.
const char* const kSmall = R"(
nodes:
  - { id: host, impl: builtin.endpoint }
  - { id: sw0, impl: builtin.switch, group: a }
  - { id: m.1, impl: builtin.endpoint, group: a/b }
  - { id: sw1, impl: builtin.switch, group: c }
edges:
  - { src: host, dst: sw0, bandwidth_gbs: 64, latency_ns: 2, bidir: true }
  - { src: sw0, dst: m.1, latency_ns: 1, kind: mem }
  - { src: sw0, dst: sw1, bandwidth_gbs: 0.5, latency_ns: 1 }
)";

/// The number of lines of `text` that contain `part` but not `besides`.
std::size_t lines_with(const std::string& text, const std::string& part, const std::string& besides) {
  std::istringstream in(text);
  std::size_t count = 0;
  for (std::string line; std::getline(in, line);)
    count += line.find(part) != std::string::npos && line.find(besides) == std::string::npos;
  return count;
}

TEST(TopologyText, ASmallGraphAsDotAndMermaid) {
  const auto dir = test::temp_dir();
  test::write_file(dir / "t.yaml", kSmall);
  auto r = test::run_kbsim("topology --topology " + (dir / "t.yaml").string() + " --dot " + (dir / "g.dot").string() +
                           " --mermaid " + (dir / "g.mmd").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "wrote " + (dir / "g.dot").string() + "\nwrote " + (dir / "g.mmd").string() + "\n");
  EXPECT_EQ(test::read_file(dir / "g.dot"), R"(digraph topology {
  node [shape=box];
  "host" [label="host\nbuiltin.endpoint"];
  subgraph cluster_1 {
    label="a";
    "sw0" [label="sw0\nbuiltin.switch"];
    subgraph cluster_2 {
      label="a/b";
      "m.1" [label="m.1\nbuiltin.endpoint"];
    }
  }
  subgraph cluster_3 {
    label="c";
    "sw1" [label="sw1\nbuiltin.switch"];
  }
  "host" -> "sw0" [label="link\n64 GB/s"];
  "sw0" -> "host" [label="link\n64 GB/s"];
  "sw0" -> "m.1" [label="mem"];
  "sw0" -> "sw1" [label="link\n0.5 GB/s"];
}
)");
  EXPECT_EQ(test::read_file(dir / "g.mmd"), R"(flowchart LR
  n0["host<br/>builtin.endpoint"]
  subgraph g1["a"]
    n1["sw0<br/>builtin.switch"]
    subgraph g2["a/b"]
      n2["m.1<br/>builtin.endpoint"]
    end
  end
  subgraph g3["c"]
    n3["sw1<br/>builtin.switch"]
  end
  n0 -->|"link<br/>64 GB/s"| n1
  n1 -->|"link<br/>64 GB/s"| n0
  n1 -->|"mem"| n2
  n1 -->|"link<br/>0.5 GB/s"| n3
)");
  // Written through a temporary name: none is left in the folder.
  for (const auto& f : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(f.path().filename().string().find(".tmp."), std::string::npos) << f.path();
}

TEST(TopologyText, TheDefaultSystemHasEveryNodeAndTheSameTextEachTime) {
  const auto dir = test::temp_dir();
  auto summary = test::run_kbsim("topology");
  ASSERT_EQ(summary.code, 0) << summary.err;
  const std::string first_line = summary.out.substr(0, summary.out.find('\n'));
  const std::size_t colon = first_line.rfind(": ");
  ASSERT_NE(colon, std::string::npos) << first_line;
  const std::size_t nodes = std::stoul(first_line.substr(colon + 2));
  for (const char* run : {"1", "2"}) {
    auto r = test::run_kbsim("topology --dot " + (dir / (std::string(run) + ".dot")).string() + " --mermaid " +
                             (dir / (std::string(run) + ".mmd")).string());
    ASSERT_EQ(r.code, 0) << r.err;
  }
  const std::string dot = test::read_file(dir / "1.dot");
  const std::string mermaid = test::read_file(dir / "1.mmd");
  EXPECT_EQ(dot, test::read_file(dir / "2.dot"));
  EXPECT_EQ(mermaid, test::read_file(dir / "2.mmd"));
  EXPECT_EQ(lines_with(dot, "[label=", " -> "), nodes);
  EXPECT_EQ(lines_with(mermaid, "[\"", "subgraph"), nodes);
}

TEST(TopologyText, JsonIntoAFileIsWhatDumpPrints) {
  const auto dir = test::temp_dir();
  auto r = test::run_kbsim("topology --json " + (dir / "g.json").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "wrote " + (dir / "g.json").string() + "\n");
  auto dump = test::run_kbsim("topology --dump");
  ASSERT_EQ(dump.code, 0) << dump.err;
  EXPECT_EQ(test::read_file(dir / "g.json"), dump.out);
  auto both = test::run_kbsim("topology --dump --json " + (dir / "h.json").string());
  EXPECT_EQ(both.code, 2);
}

TEST(TopologyText, AnUnwritableFileIsAUsageError) {
  auto r = test::run_kbsim("topology --dot /nonexistent-kbsim-dir/g.dot");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--dot /nonexistent-kbsim-dir/g.dot: its folder /nonexistent-kbsim-dir does not exist"));
  const auto dir = test::temp_dir();
  auto folder = test::run_kbsim("topology --mermaid " + dir.string());
  EXPECT_EQ(folder.code, 2);
  EXPECT_THAT(folder.err, HasSubstr("is a directory; give a file name"));
  auto both = test::run_kbsim("topology --dump --dot " + (dir / "g.dot").string());
  EXPECT_EQ(both.code, 2);
  EXPECT_FALSE(std::filesystem::exists(dir / "g.dot"));
}

}  // namespace
}  // namespace kbsim
