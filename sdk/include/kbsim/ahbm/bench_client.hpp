// A bench's own client of memory initiators: for benches that submit memory requests to components directly
// (MemInitiator::submit) instead of through the host runtime, in a run that may be split over mpirun's ranks
// (docs/scale-out.md). There every rank runs the bench and submits alike, but only the rank that runs an initiator
// hears of its completions; this client sends them, with their answers, to every other rank after each run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kbsim/ahbm/memory.hpp"
#include "kbsim/bench.hpp"

namespace kbsim::ahbm {

/// The initiator interface of `node` (a PE's pe_dma, a pcie_ep) in a system built from `graph`. When its
/// implementation is no initiator (a block swapped in that does not fit there), a ConfigError that starts where that
/// implementation was chosen: the node's place in the file, or the --set that put it there.
inline MemInitiator& initiator_of(System& sys, const Graph& graph, const std::string& node) {
  if (MemInitiator* i = as_initiator(sys.component(node))) return *i;
  auto spec = std::find_if(graph.nodes.begin(), graph.nodes.end(), [&](const NodeSpec& n) { return n.id == node; });
  const std::string at = spec == graph.nodes.end() ? graph.source : spec->origin;
  const std::string impl = spec == graph.nodes.end() ? "" : " (" + spec->impl + ")";
  throw ConfigError(at + ": " + node + impl + " does not initiate memory requests, as a block in its place must");
}

/// Submits a bench's requests and hands their completions to `inner` once the system has run, in the order they
/// completed (by completion time, then in the order they were submitted), alike in one process and on every rank.
/// Make it on the system it submits to, and let every request complete before it goes (it must not outlive the
/// system, nor leave a request in flight that would call it back).
class BenchMemClient final : public MemClient, public ReplicatedService {
 public:
  BenchMemClient(System& sys, MemClient& inner) : sys_(sys), inner_(inner) { sys_.share(*this); }
  ~BenchMemClient() { sys_.unshare(*this); }
  BenchMemClient(const BenchMemClient&) = delete;
  BenchMemClient& operator=(const BenchMemClient&) = delete;

  void submit(MemInitiator& to, Ref<MemRequest> req) {
    if (!index_.emplace(req.get(), sent_.size()).second)
      throw SimError("a bench submitted one memory request twice through its BenchMemClient");
    sent_.push_back(req);
    to.submit(std::move(req), this);
  }
  /// Run the system to its end, then hand what completed to the inner client.
  void run() {
    sys_.run();
    deliver();
  }
  /// Hand what completed so far to the inner client (after the bench's own runs of the system).
  void deliver() {
    std::sort(done_.begin(), done_.end());
    const auto done = std::move(done_);
    done_.clear();
    for (const auto& [t, k] : done) inner_.on_complete(*sent_[k]);
  }

  void on_complete(MemRequest& req) override {
    const auto it = index_.find(&req);
    if (it == index_.end()) throw SimError("a bench's memory client heard of a request it did not submit");
    done_.emplace_back(req.t_done, it->second);
    if (sys_.is_split()) news_.push_back(it->second);
  }
  void save_news(ByteWriter& w) override {
    w.put(static_cast<std::uint64_t>(news_.size()));
    for (std::size_t k : news_) {
      w.put(static_cast<std::uint64_t>(k));
      sent_[k]->save(w);
    }
    news_.clear();
  }
  void load_news(ByteReader& r) override {
    // (into this rank's own copy of the request: the same, submitted by the same bench code)
    for (std::size_t n = r.get_count(); n > 0; --n) {
      const auto k = r.get<std::uint64_t>();
      if (k >= sent_.size()) throw SimError("another rank completed a request this rank's bench did not submit");
      sent_[k]->load(r);
      done_.emplace_back(sent_[k]->t_done, k);
    }
  }

 private:
  System& sys_;
  MemClient& inner_;
  std::vector<Ref<MemRequest>> sent_;                         ///< in submission order
  std::unordered_map<const MemRequest*, std::size_t> index_;  ///< (a lookup only)
  std::vector<std::pair<Tick, std::size_t>> done_;            ///< completed: when, which
  std::vector<std::size_t> news_;                             ///< completed here since the last run's end
};

}  // namespace kbsim::ahbm
