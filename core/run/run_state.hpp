// A run's state: the systems it built and what they were built from. Each
// distinct graph is elaborated once, with a route table its systems share;
// equal graphs built again reuse both. Where each system runs (whole here, or
// in parts over a job's processes) is its placement's business
// (component/placement.hpp). Nested runs and sweep points add their simulated
// time, events and build time; they share their topologies and elaborations
// with it (RunCache).
#pragma once

#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "component/placement.hpp"
#include "component/simulation.hpp"
#include "kbsim/graph.hpp"

namespace kbsim::core {

class Registry;

/// What a run shares with the runs it starts (nested benches and sweep points, on any of its threads): topologies
/// loaded and graphs elaborated, the last few of each. A bench that runs others on alike systems (fidelity, the
/// milestone sweeps) loads and elaborates each once. The registry does not change during a run, and an elaboration
/// is immutable; each thread still routes with tables of its own (RouteTable::for_elaboration).
class RunCache {
 public:
  /// The topology `file` with `overrides`, loaded by `load` unless it was.
  std::shared_ptr<const Graph> topology(const std::filesystem::path& file, const std::vector<std::string>& overrides,
                                        const std::function<Graph()>& load);
  /// An equal graph's elaboration, else `graph` elaborated by `make` (outside the lock) and kept.
  std::shared_ptr<const Elaboration> elaboration(const std::shared_ptr<const Graph>& graph,
                                                 const std::function<std::shared_ptr<const Elaboration>()>& make);

 private:
  static constexpr std::size_t kKept = 4;
  struct Topology {
    std::filesystem::path file;
    std::vector<std::string> overrides;
    std::shared_ptr<const Graph> graph;
  };
  struct Elaborated {
    std::shared_ptr<const Graph> graph;
    std::shared_ptr<const Elaboration> elaboration;
  };
  std::mutex mutex_;
  std::deque<Topology> topologies_;    ///< newest first
  std::deque<Elaborated> elaborated_;  ///< newest first
};

class RunState {
 public:
  /// `cache`: the run's that started this one (nullptr: a cache of its own).
  RunState(const Registry& registry, std::unique_ptr<Placement> placement, std::shared_ptr<RunCache> cache = nullptr);
  /// What it shares with the runs it starts.
  const std::shared_ptr<RunCache>& cache() const noexcept { return cache_; }
  ~RunState();

  /// A new system of `graph`: an equal graph's elaboration if one was built, else `graph` elaborated and kept
  /// (as `shared` when given, else moved from `movable` when given, else copied).
  Simulation& build(const Graph& graph, const std::shared_ptr<const Graph>& shared, Graph* movable);
  /// Where its systems run.
  Placement& placement() noexcept { return *placement_; }
  const Placement& placement() const noexcept { return *placement_; }

  /// A nested run's or a sweep point's figures, counted with this run's.
  void add_nested(Tick sim_time, std::uint64_t events, double build_wall_s);

  const std::vector<std::unique_ptr<Simulation>>& systems() const noexcept { return systems_; }
  /// The graph of every system built, in order (systems of equal graphs share one).
  const std::vector<std::shared_ptr<const Graph>>& graphs() const noexcept { return graphs_; }
  std::size_t elaborations() const noexcept { return elaborated_.size(); }
  Tick sim_time() const;
  std::uint64_t events() const;
  double build_wall_s() const noexcept { return build_wall_s_; }

 private:
  struct Elaborated {
    std::shared_ptr<const Graph> graph;
    std::shared_ptr<const Elaboration> elaboration;
    std::shared_ptr<RouteTable> routes;  ///< shared by its systems (and alike ones of this thread's runs)
  };
  Elaborated& elaborated(const Graph& graph, const std::shared_ptr<const Graph>& shared, Graph* movable);

  const Registry& registry_;
  std::unique_ptr<Placement> placement_;
  std::shared_ptr<RunCache> cache_;
  std::vector<Elaborated> elaborated_;  ///< newest last
  std::vector<std::shared_ptr<const Graph>> graphs_;
  std::vector<std::unique_ptr<Simulation>> systems_;
  Tick nested_sim_time_ = 0;
  std::uint64_t nested_events_ = 0;
  double build_wall_s_ = 0.0;
};

}  // namespace kbsim::core
