// The floor: message-mesh written by hand, as fast as this machine runs it.
// The same workload as `kbsim run --bench message-mesh` (an x-by-y torus of
// 1 ns links; every node starts one event per port at time 0 and passes each
// event it receives to a neighbour chosen by its own generator, seeded as the
// mesh_node component seeds it), with only what any discrete-event simulator
// needs: node objects with a virtual handler, a message object per hop, and
// an event queue ordered by (time, insertion order) for any delay: events of
// one time share a list (found by hashing the time), and a binary heap orders
// the distinct times. It does not use that every link here takes 1 ns. kbsim's
// events per second divided by this program's is the share of that floor
// kbsim reaches (scripts/perf.sh).
//
//   kbsim_floor_mesh X Y STOP_NS [SEED]   prints: delivered, per-node min/max, events/s
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <queue>
#include <unordered_map>
#include <vector>

#include "kbsim/rng.hpp"

namespace {

struct Msg {
  Msg* next_free = nullptr;
};

struct Delivery {
  std::uint32_t node;
  Msg* msg;
};

class Floor;

class Node {
 public:
  virtual ~Node() = default;
  virtual void on_message(Floor& f, Msg* m) = 0;
};

class Floor {
 public:
  /// Deliver `m` to `node` 1 ns (1000 ps) from now.
  void deliver_next(std::uint32_t node, Msg* m) { at(now_ + 1000).push_back({node, m}); }
  Msg* make() {
    if (!free_) return new Msg;
    Msg* m = free_;
    free_ = m->next_free;
    return m;
  }
  void drop(Msg* m) {
    m->next_free = free_;
    free_ = m;
  }
  std::uint64_t run(std::vector<std::unique_ptr<Node>>& nodes, std::uint64_t stop_ns) {
    std::uint64_t events = 0;
    const std::uint64_t limit = stop_ns * 1000;
    std::vector<Delivery> due;
    while (!times_.empty() && times_.top() <= limit) {
      now_ = times_.top();
      times_.pop();
      auto it = lists_.find(now_);
      due.swap(it->second);  // handlers add only to later times
      lists_.erase(it);
      for (const Delivery& d : due) {
        ++events;
        nodes[d.node]->on_message(*this, d.msg);
      }
      due.clear();
      spare_.push_back(std::move(due));  // its capacity serves a later time
      due = {};
    }
    return events;
  }

 private:
  std::vector<Delivery>& at(std::uint64_t t) {
    auto [it, fresh] = lists_.try_emplace(t);
    if (fresh) {
      times_.push(t);
      if (!spare_.empty()) {
        it->second = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    return it->second;
  }
  std::unordered_map<std::uint64_t, std::vector<Delivery>> lists_;
  std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<>> times_;
  std::vector<std::vector<Delivery>> spare_;
  std::uint64_t now_ = 0;
  Msg* free_ = nullptr;
};

class MeshNode final : public Node {
 public:
  MeshNode(std::uint64_t seed, std::uint32_t index, const std::uint32_t* neighbours)
      : rng_(kbsim::Rng::derive(seed, index)), neighbours_(neighbours) {}
  void on_message(Floor& f, Msg* m) override {
    ++received;
    // A fresh message per hop, as a simulator's message travels through its queue.
    f.drop(m);
    f.deliver_next(neighbours_[rng_.below(4)], f.make());
  }
  std::uint64_t received = 0;

 private:
  kbsim::Rng rng_;
  const std::uint32_t* neighbours_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: kbsim_floor_mesh X Y STOP_NS [SEED]\n");
    return 2;
  }
  const auto x = static_cast<std::uint32_t>(std::atoi(argv[1])), y = static_cast<std::uint32_t>(std::atoi(argv[2]));
  const auto stop_ns = std::strtoull(argv[3], nullptr, 10);
  const std::uint64_t seed = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 1;
  if (x < 1 || y < 1) return 2;
  // Ports in the bench's order: +x, -x, +y, -y; node index = j * x + i.
  std::vector<std::uint32_t> neighbours(4u * x * y);
  for (std::uint32_t j = 0; j < y; ++j)
    for (std::uint32_t i = 0; i < x; ++i) {
      std::uint32_t* n = &neighbours[4u * (j * x + i)];
      n[0] = j * x + (i + 1) % x;
      n[1] = j * x + (i + x - 1) % x;
      n[2] = ((j + 1) % y) * x + i;
      n[3] = ((j + y - 1) % y) * x + i;
    }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<Node>> nodes;
  nodes.reserve(static_cast<std::size_t>(x) * y);
  for (std::uint32_t k = 0; k < x * y; ++k) nodes.push_back(std::make_unique<MeshNode>(seed, k, &neighbours[4u * k]));
  Floor floor;
  for (std::uint32_t k = 0; k < x * y; ++k)  // time 0: one event per port, arriving at 1 ns
    for (int p = 0; p < 4; ++p) floor.deliver_next(neighbours[4u * k + p], floor.make());
  const auto t1 = std::chrono::steady_clock::now();
  const std::uint64_t events = floor.run(nodes, stop_ns);
  const auto t2 = std::chrono::steady_clock::now();
  std::uint64_t lo = ~std::uint64_t{0}, hi = 0;
  for (const auto& n : nodes) {
    const std::uint64_t r = static_cast<const MeshNode&>(*n).received;
    lo = std::min(lo, r);
    hi = std::max(hi, r);
  }
  const double run_s = std::chrono::duration<double>(t2 - t1).count();
  std::printf("delivered %llu per_node_min %llu per_node_max %llu build_s %.4f run_s %.4f events_per_s %.0f\n",
              static_cast<unsigned long long>(events), static_cast<unsigned long long>(lo),
              static_cast<unsigned long long>(hi), std::chrono::duration<double>(t1 - t0).count(), run_s,
              run_s > 0 ? static_cast<double>(events) / run_s : 0.0);
  return 0;
}
