// The collective trace (this plugin): `kbsim run --ccl-trace FILE` on the
// ccl-allreduce bench writes one CSV line per IPCQ send, in time order, as
// many as the PE_IPCQs report sent, and the queue tables in results.json.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "kbsim/testing_cli.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kbsim {
namespace {

/// The lines of a text, without their newlines.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// The sum of every `"sent": N` in results.json: the PE_IPCQs' sends (no other component of this bench has "sent").
long sent_in(const std::string& results) {
  const std::string key = "\"sent\": ";
  long sum = 0;
  for (std::size_t at = results.find(key); at != std::string::npos; at = results.find(key, at + 1))
    sum += std::stol(results.substr(at + key.size(), 20));
  return sum;
}

/// One small all_reduce (2 SIPs x 16 cubes, 2 KB shards) with the trace on: its trace's lines and its results.json.
struct TracedRun {
  std::vector<std::string> trace;
  std::string results;
};
TracedRun run_traced() {
  const auto dir = testkit::temp_dir();
  const testkit::CliResult r = testkit::run_kbsim("run --bench ccl-allreduce --param n_elem=1024 --ccl-trace " +
                                                  (dir / "ccl.csv").string() + " --out " + (dir / "out").string());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("ccl trace"));
  return {lines_of(testkit::read_file(dir / "ccl.csv")), testkit::read_file(dir / "out" / "results.json")};
}

TEST(CclTrace, OneLinePerSendAsThePeIpcqsCountThem) {
  const TracedRun run = run_traced();
  ASSERT_FALSE(run.trace.empty());
  EXPECT_EQ(run.trace.front(), "t_ns,t_end_ns,rank,sender,dir,nbytes,receiver,rx_dir,slot_addr");
  EXPECT_EQ(static_cast<long>(run.trace.size()) - 1, sent_in(run.results));
  EXPECT_EQ(run.trace.size() - 1, 62u);  // 31 sends per SIP for lrab_hierarchical_allreduce on 4x4 cubes
}

TEST(CclTrace, SendsAreInTimeOrderAndResolved) {
  const TracedRun run = run_traced();
  ASSERT_GE(run.trace.size(), 2u);
  EXPECT_EQ(run.trace[1], "1900.900,1904.900,0,sip0.cube0.pe0,E,2048,sip0.cube1.pe0,W,0x1000000100008000");
  double last = 0;
  for (std::size_t i = 1; i < run.trace.size(); ++i) {
    const double t = std::stod(run.trace[i]);
    EXPECT_GE(t, last) << run.trace[i];
    last = t;
    EXPECT_THAT(run.trace[i], Not(HasSubstr("?"))) << "a send whose sender was not found";
  }
}

TEST(CclTrace, DumpsTheQueueTables) {
  const TracedRun run = run_traced();
  EXPECT_THAT(run.results, HasSubstr("\"ipcq_queues\""));
  // sip0.cube0.pe0's E queue: its rx ring, and where its sends land (cube1's W ring, as the trace's first line shows)
  EXPECT_THAT(run.results, HasSubstr("\"pe\": \"sip0.cube0.pe0\",\n      \"dir\": \"E\",\n      \"peer\": "
                                     "\"sip0.cube1.pe0\",\n      \"peer_dir\": \"W\",\n      \"rx_base\": "
                                     "\"0x1000000000004000\",\n      \"peer_rx_base\": \"0x1000000100008000\""));
}

TEST(CclTrace, NoFlagNoTraceNoQueues) {
  const auto dir = testkit::temp_dir();
  const testkit::CliResult r =
      testkit::run_kbsim("run --bench ccl-allreduce --param n_elem=1024 --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(testkit::read_file(dir / "out" / "results.json"), Not(HasSubstr("ipcq_queues")));
}

}  // namespace
}  // namespace kbsim
