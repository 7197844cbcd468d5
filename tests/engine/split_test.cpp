// A system split over ranks (component/split.hpp), the ranks here being threads
// that talk through memory: the same statistics and event count as one process.
#include "component/split.hpp"

#include <gtest/gtest.h>

#include <barrier>
#include <mutex>
#include <thread>

#include "component/partition.hpp"
#include "harness.hpp"

namespace kbsim {
namespace {

/// Collectives among `n` threads: each deposits its part, all wait, each takes what it needs, all wait. One rank
/// runs at a time (it holds the baton, given up only inside a collective): a process's message pools and globals
/// are one rank's, as under mpirun.
class ThreadTransport final : public core::Transport {
 public:
  struct Shared {
    explicit Shared(unsigned n) : ranks(n), sync(n), boxes(n, std::vector<std::string>(n)), ticks(n), blobs(n) {}
    unsigned ranks;
    std::mutex baton;
    std::barrier<> sync;
    std::vector<std::vector<std::string>> boxes;  ///< boxes[from][to]
    std::vector<Tick> ticks;
    std::vector<std::string> blobs;
  };
  ThreadTransport(Shared& s, unsigned rank) : s_(s), rank_(rank) {}
  /// All wait for all, the baton put down meanwhile.
  void wait() {
    s_.baton.unlock();
    s_.sync.arrive_and_wait();
    s_.baton.lock();
  }
  Exchanged exchange(std::vector<std::string> to_rank, Tick next) override {
    s_.boxes[rank_] = std::move(to_rank);
    s_.ticks[rank_] = next;
    wait();
    Exchanged in;
    in.from_rank.resize(s_.ranks);
    for (unsigned r = 0; r < s_.ranks; ++r) {
      in.from_rank[r] = s_.boxes[r][rank_];
      in.next = std::min(in.next, s_.ticks[r]);
    }
    wait();
    return in;
  }
  std::vector<std::string> gather(const std::string& mine) override {
    s_.blobs[rank_] = mine;
    wait();
    std::vector<std::string> all = s_.blobs;
    wait();
    return all;
  }

 private:
  Shared& s_;
  unsigned rank_;
};

/// An x-by-y torus of message-mesh nodes, 1 ns links, ports +x, -x, +y, -y.
std::string torus(unsigned x, unsigned y) {
  std::string t = "nodes:\n";
  auto id = [&](unsigned i, unsigned j) { return "n" + std::to_string(j * x + i); };
  for (unsigned k = 0; k < x * y; ++k) t += "  - { id: n" + std::to_string(k) + ", impl: builtin.mesh_node }\n";
  t += "edges:\n";
  for (unsigned j = 0; j < y; ++j)
    for (unsigned i = 0; i < x; ++i)
      for (const auto& to : {id((i + 1) % x, j), id((i + x - 1) % x, j), id(i, (j + 1) % y), id(i, (j + y - 1) % y)})
        t += "  - { src: " + id(i, j) + ", dst: " + to + ", latency_ns: 1, kind: mesh }\n";
  return t;
}

TEST(Split, AMeshOverTwoToFourRanksGivesTheStatisticsOfOneProcess) {
  const core::Registry& reg = test::shared_registry();
  auto serial = test::build_system(reg, torus(6, 6));
  serial->run_until(ns_to_ticks(200.0));
  serial->finish();
  const auto& el = serial->elaboration();
  for (unsigned ranks : {2u, 3u, 4u}) {
    const core::Partition part = core::partition(*el, ranks);
    ThreadTransport::Shared shared(ranks);
    std::vector<std::unique_ptr<core::Simulation>> sims(ranks);
    std::vector<std::thread> threads;
    for (unsigned r = 0; r < ranks; ++r)
      threads.emplace_back([&, r] {
        std::lock_guard hold(shared.baton);
        ThreadTransport net(shared, r);
        core::Split split{&part, r, &net};
        sims[r] = std::make_unique<core::Simulation>(el, reg, nullptr, &split);
        sims[r]->run_until(ns_to_ticks(200.0));
        sims[r]->finish();
      });
    for (auto& t : threads) t.join();
    for (unsigned r = 0; r < ranks; ++r) {
      EXPECT_EQ(sims[r]->events(), serial->events()) << ranks << " ranks, rank " << r;
      for (NodeIndex n = 0; n < el->nodes.size(); ++n)
        ASSERT_EQ(sims[r]->node_stats(n)[0].count, serial->node_stats(n)[0].count)
            << ranks << " ranks, rank " << r << ", node " << el->nodes[n].id;
    }
  }
}

}  // namespace
}  // namespace kbsim
