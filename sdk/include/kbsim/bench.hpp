// Benches: plugins that build a system, drive it and report metrics.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "kbsim/component.hpp"
#include "kbsim/graph.hpp"
#include "kbsim/metrics.hpp"
#include "kbsim/params.hpp"

namespace kbsim {

/// A built, runnable simulation of one graph.
class System {
 public:
  /// Process every event at or before `t`; afterwards now() == t unless a stop was requested.
  virtual void run_until(Tick t) = 0;
  /// Process events until none is left or a component requested a stop.
  virtual void run() = 0;
  virtual Tick now() const noexcept = 0;
  /// Events processed so far (cancelled events do not count).
  virtual std::uint64_t events() const noexcept = 0;
  virtual std::size_t node_count() const noexcept = 0;
  virtual std::string_view node_id(NodeIndex n) const noexcept = 0;
  /// Call finish() on every component (once; later calls do nothing). Statistics
  /// are final afterwards; read them after this.
  virtual void finish() = 0;
  /// A statistic of a node; throws SimError if either is unknown.
  virtual const Stat& stat(std::string_view node, std::string_view name) const = 0;
  /// A component, for benches that drive components through their own API.
  virtual Component& component(std::string_view node) = 0;

 protected:
  ~System() = default;
};

/// What a bench is given.
class BenchContext {
 public:
  virtual const Params& params() const noexcept = 0;
  /// The resolved --topology graph (with --set overrides applied).
  virtual const Graph& topology() = 0;
  /// Elaborate a graph into a runnable system. It lives until the bench returns;
  /// its statistics go into results.json.
  virtual System& build(Graph graph) = 0;
  virtual Metrics& metrics() noexcept = 0;
  /// A line for the printed summary.
  virtual void note(std::string_view line) = 0;

 protected:
  ~BenchContext() = default;
};

struct BenchInfo {
  std::string name;  ///< e.g. "message-mesh"
  std::string summary;
  std::vector<ParamSpec> params;
};

class Bench {
 public:
  virtual ~Bench() = default;
  virtual void run(BenchContext& ctx) = 0;
};

}  // namespace kbsim
