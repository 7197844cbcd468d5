// A run's state: the systems it built and what they were built from. Each
// distinct graph is elaborated once, with a route table its systems share;
// equal graphs built again reuse both. Where each system runs (whole here, or
// in parts over a job's processes) is its placement's business
// (component/placement.hpp). Nested runs and sweep points add their simulated
// time, events and build time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "component/placement.hpp"
#include "component/simulation.hpp"
#include "kbsim/graph.hpp"

namespace kbsim::core {

class Registry;

class RunState {
 public:
  RunState(const Registry& registry, std::unique_ptr<Placement> placement);
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
  std::vector<Elaborated> elaborated_;  ///< newest last
  std::vector<std::shared_ptr<const Graph>> graphs_;
  std::vector<std::unique_ptr<Simulation>> systems_;
  Tick nested_sim_time_ = 0;
  std::uint64_t nested_events_ = 0;
  double build_wall_s_ = 0.0;
};

}  // namespace kbsim::core
