// Benches: plugins that build a system, drive it and report metrics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kbsim/component.hpp"
#include "kbsim/graph.hpp"
#include "kbsim/metrics.hpp"
#include "kbsim/params.hpp"

namespace kbsim {

namespace rt {
class Runtime;
}

/// One node of a route as `System::route_info` describes it, with the link
/// that leaves it (absent on the last node).
struct RouteHop {
  std::string_view node;
  std::string_view impl;
  double transit_ns = 0.0;  ///< the cost routing charges for passing through (its overhead)
  std::string_view link_kind;
  double link_bw_gbs = 0.0;  ///< 0 = unlimited
  double link_latency_ns = 0.0;
  std::uint32_t link_flit_bytes = 0;
};

struct RouteInfo {
  std::vector<RouteHop> hops;
  double cost_ns = 0.0;  ///< the routing cost the path was chosen by
};

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
  /// The route the core would give a message from `from` to `to` in routing view `view`.
  virtual RouteInfo route_info(std::string_view from, std::string_view to, std::string_view view = "all") = 0;
  /// The graph's system-wide attributes (empty for explicit topologies).
  virtual std::span<const RawParam> attrs() const noexcept = 0;
  /// End the current run()/run_until() after the event being processed.
  virtual void request_stop() noexcept = 0;
  /// Events waiting to be processed.
  virtual bool idle() const noexcept = 0;
  /// The data of simulated memory.
  virtual MemoryStore& memory() = 0;

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
  /// The host runtime on a system built from topology() (created on first use;
  /// see kbsim/runtime.hpp). A bench that uses it but submits nothing fails with NO_REQUESTS.
  virtual rt::Runtime& runtime() = 0;
  /// `kbsim run --verify-data`: the data pass runs (tensors read back hold
  /// computed values) and a bench checks its outputs (kbsim/verify.hpp).
  virtual bool verify_data() const noexcept = 0;

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
