// Collectives among threads standing in for the ranks of a split system (split/split.hpp), for tests.
#pragma once

#include <algorithm>
#include <barrier>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "split/split.hpp"

namespace kbsim::test {

/// Collectives among `n` threads: each deposits its part, all wait, each takes what it needs, all wait. One rank
/// runs at a time (it holds the baton, given up only inside a collective): a process's message pools and globals
/// are one rank's, as under mpirun.
class ThreadTransport final : public core::Transport {
 public:
  struct Shared {
    explicit Shared(unsigned n) : ranks(n), sync(n), boxes(n, std::vector<std::string>(n)), ticks(n) {}
    unsigned ranks;
    std::mutex baton;
    std::barrier<> sync;
    std::vector<std::vector<std::string>> boxes;  ///< boxes[from][to]
    std::vector<Tick> ticks;
  };
  ThreadTransport(Shared& s, unsigned rank) : s_(s), rank_(rank) {}
  /// All wait for all, the baton put down meanwhile.
  void wait() {
    s_.baton.unlock();
    s_.sync.arrive_and_wait();
    s_.baton.lock();
  }
  void exchange(const std::vector<std::string>& to_rank, Tick next, Exchanged& in) override {
    s_.boxes[rank_] = to_rank;
    s_.ticks[rank_] = next;
    wait();
    in.from_rank.resize(s_.ranks);
    in.next = kNever;
    for (unsigned r = 0; r < s_.ranks; ++r) {
      in.from_rank[r] = s_.boxes[r][rank_];
      in.next = std::min(in.next, s_.ticks[r]);
    }
    wait();
  }

 private:
  Shared& s_;
  unsigned rank_;
};

/// Run `rank(r, net)` for ranks 0..ranks-1, each on a thread of its own holding the baton, with `net` its transport;
/// returns when all have.
inline void run_ranks(unsigned ranks, const std::function<void(unsigned, ThreadTransport&)>& rank) {
  ThreadTransport::Shared shared(ranks);
  std::vector<std::thread> threads;
  for (unsigned r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      std::lock_guard hold(shared.baton);
      ThreadTransport net(shared, r);
      rank(r, net);
    });
  for (auto& t : threads) t.join();
}

}  // namespace kbsim::test
