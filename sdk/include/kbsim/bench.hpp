// Benches: plugins that build a system, drive it and report metrics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kbsim/component.hpp"
#include "kbsim/config_section.hpp"
#include "kbsim/extension.hpp"
#include "kbsim/graph.hpp"
#include "kbsim/metrics.hpp"
#include "kbsim/op_record.hpp"
#include "kbsim/params.hpp"

namespace kbsim {

/// One node of a route as `System::route_info` describes it, with the link
/// that leaves it (absent on the last node).
struct RouteHop {
  std::string_view node;
  std::string_view impl;
  double transit_ns = 0.0;  ///< its overhead for passing through (what least-time routing charges)
  std::string_view link_kind;
  double link_bw_gbs = 0.0;  ///< 0 = unlimited
  double link_latency_ns = 0.0;
  std::uint32_t link_flit_bytes = 0;
};

struct RouteInfo {
  std::vector<RouteHop> hops;
  double cost = 0.0;           ///< the routing cost the path was chosen by, in `cost_unit`
  std::string_view cost_unit;  ///< "ns" (RouteMetric::kLatency) or "mm" (kDistance)
  /// Node overheads plus link latencies along the path: the time a 0-byte
  /// message would take, whatever the metric.
  double latency_ns() const noexcept {
    double t = 0.0;
    for (std::size_t k = 0; k < hops.size(); ++k) {
      if (k > 0 && k + 1 < hops.size()) t += hops[k].transit_ns;
      t += hops[k].link_latency_ns;
    }
    return t;
  }
};

/// What one directed link carried so far.
struct LinkUse {
  std::string_view src, dst, kind;
  std::uint64_t messages = 0, bytes = 0;
  double busy_ns = 0.0;  ///< time its wire was occupied
};

/// A built, runnable simulation of one graph.
class System {
 public:
  virtual ~System() = default;
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
  virtual Component& component(NodeIndex n) = 0;
  /// A node by id; throws ConfigError if there is none.
  virtual NodeIndex find_node(std::string_view id) const = 0;
  /// A node that may not exist: kNoNode if absent.
  virtual NodeIndex lookup_node(std::string_view id) const noexcept = 0;
  /// The name of a routing view (0 is "all").
  virtual std::string_view view_name(ViewId view) const = 0;
  /// The route the core would give a message from `from` to `to` in routing view `view`.
  virtual RouteInfo route_info(std::string_view from, std::string_view to, std::string_view view = "all") = 0;
  /// Every link that carried bytes so far, in link order (busiest first: sort by busy_ns).
  virtual std::vector<LinkUse> link_use() const = 0;
  /// The graph's system-wide attributes (empty for explicit topologies).
  virtual std::span<const RawParam> attrs() const noexcept = 0;
  /// End the current run()/run_until() after the event being processed.
  virtual void request_stop() noexcept = 0;
  /// Events waiting to be processed (in a split system: on any rank, when the last run ended, unless the bench
  /// gave work since).
  virtual bool idle() const noexcept = 0;
  /// Split over the ranks of mpirun (docs/scale-out.md): each rank runs a part of it, and the bench on every rank.
  virtual bool is_split() const noexcept { return false; }
  /// What its components wait for, as each says it (kbsim/waiting.hpp), in node order; the ones that wait for
  /// nothing left out. In a split system, every rank's, so call it on every rank alike (as when a run is stuck).
  virtual std::vector<std::string> waiting() = 0;

  /// The service registered under `name` on this system (created on first
  /// use by the plugin that provides it), or nullptr when none is.
  virtual Service* find_service(std::string_view name) = 0;
  /// Offer `service` (owned by the caller, e.g. a run observer, and outliving
  /// the system) under `name`, before any plugin's instance was made (Error if one was).
  virtual void provide(std::string_view name, Service& service) = 0;
  /// In a split system, also gather `news`'s news after every run (ReplicatedService), until unshare: for a
  /// bench's own client of its components' interfaces (ahbm::BenchMemClient), which every rank makes alike and in
  /// the same order. Services a system provides are gathered without this.
  virtual void share(ReplicatedService& news) { (void)news; }
  virtual void unshare(ReplicatedService& news) noexcept { (void)news; }
  /// The op log of this system, or nullptr when the run keeps none.
  virtual OpLogView* op_log() noexcept = 0;
  /// The loaded plugins' extensions of one kind (e.g. "kernel"), sorted by name.
  virtual std::vector<const Extension*> extensions(std::string_view kind) const = 0;
  /// The extension of one kind and name, or nullptr; loads only the plugin that provides it (a kernel catalogue
  /// asked for one kernel starts no interpreter for the kernels of a Python plugin file it does not run).
  virtual const Extension* extension(std::string_view kind, std::string_view name) const = 0;

  template <NamedService T>
  T* find() {
    return service_cast<T>(find_service(T::kServiceName));
  }
  /// A typed service (kbsim/services.hpp); ConfigError if no plugin provides it.
  template <NamedService T>
  T& service() {
    if (T* s = find<T>()) return *s;
    throw no_service(T::kServiceName);
  }
};

/// One point of a sweep (BenchContext::run_points): a registered bench with
/// its parameters and --set overrides (after the run's own).
struct SweepPoint {
  std::string bench;
  std::vector<std::string> params;     ///< "key=value"
  std::vector<std::string> overrides;  ///< "key=value", as --set takes them (a section's included)
};

/// What one point gave: its metrics, or the one-line error it failed with.
struct PointResult {
  bool ok = false;
  std::string error;  ///< a failed point: its error, prefixed by the point's configuration
  Metrics metrics;    ///< a successful point: as its own results.json would hold them
};

/// What a bench is given.
class BenchContext {
 public:
  virtual const Params& params() const noexcept = 0;
  /// The resolved --topology graph (with --set overrides applied).
  virtual const Graph& topology() = 0;
  /// Elaborate a graph into a runnable system. It lives until the bench returns
  /// or releases it (release()); its statistics go into results.json. Building a graph equal to one built
  /// before reuses what it elaborated to (checked nodes, resolved parameters,
  /// links, the id index): only the components are made anew, so a fresh
  /// system per scenario costs little more than its components.
  virtual System& build(const Graph& graph) = 0;
  /// The same, taking the graph over instead of copying it when it is new.
  virtual System& build(Graph&& graph) = 0;
  /// The bench is done with `system`, one it built with build(): it finishes now, as every system does when the
  /// bench returns (its services, then its components), and keeps only what results.json reports of it: its
  /// statistics, its links' traffic, its simulated time and events. Its components, pending events and wires are
  /// freed, so a bench that builds a fresh system per scenario holds one at a time. Afterwards `system` still
  /// answers now(), events(), stat(), link_use(), its nodes' names and idle() (true); running it or reaching a
  /// component or a service is a BenchError (RELEASED), and so is releasing it again or releasing configured().
  virtual void release(System& system) = 0;
  virtual Metrics& metrics() noexcept = 0;
  /// A line for the printed summary.
  virtual void note(std::string_view line) = 0;
  /// The system built from topology() (built on first use, then the same one).
  /// The run's op log and observers (data pass, trace) attach to it, and
  /// model services such as the host runtime (kbsim/rt/runtime.hpp) live on it.
  virtual System& configured() = 0;
  /// The run's flags: every flag the run observers declare (kbsim/observer.hpp), as given on the command line or
  /// its default. `kbsim run --verify-data`, the data pass's, is read with verify::asked (kbsim/tl/verify.hpp).
  virtual const Params& flags() const noexcept = 0;
  /// A configuration section a plugin declares (kbsim/config_section.hpp), as read for this run: NAME.yaml or
  /// `--NAME FILE`, with `--set NAME.*`. results.json records the sections a bench read. ConfigError if no plugin
  /// declares one of that name.
  virtual const Section& section(std::string_view name) const = 0;
  /// Run another registered bench to completion on this run's topology, with
  /// this run's --set overrides followed by `overrides`, and return its
  /// metrics (as its results.json would hold them). Its notes are not printed
  /// and its systems not written; its own failure (BenchError) propagates.
  virtual const Metrics& run_bench(std::string_view name, const std::vector<std::string>& params,
                                   const std::vector<std::string>& overrides = {}) = 0;
  /// Run independent points, each as run_bench would, and return their
  /// results in the order given. The points run in parallel as the run was
  /// told (`kbsim run -j N`: N local worker processes; under `mpirun` each
  /// rank runs its share and every rank gets every result), with the same
  /// results whatever the parallelism. A point that fails does not stop the
  /// others: its PointResult says why. Every point and its resolved
  /// configuration go into the run's points.json.
  virtual std::vector<PointResult> run_points(const std::vector<SweepPoint>& points) = 0;
  /// A file of the run's output folder (a figure, a table, index.html),
  /// written with results.json when the run succeeds (all or nothing), by one
  /// process only under mpirun. `name` is a plain file name.
  virtual void write_file(std::string_view name, std::string content) = 0;

 protected:
  ~BenchContext() = default;
};

struct BenchInfo {
  std::string name;  ///< e.g. "message-mesh"
  std::string summary;
  std::vector<ParamSpec> params;
  /// The bench reads the op log's records itself (System::op_log() on the
  /// configured system): the run keeps them even when no observer asks.
  bool reads_op_log = false;
  /// The bench runs on the configured topology (`--topology`, `--set`): it calls BenchContext::topology(),
  /// configured(), run_bench() or run_points(). A bench that builds its own systems leaves it false, and then an
  /// explicit --topology or a topology --set is refused with one line instead of being silently ignored; a bench
  /// that leaves it false and still reads the topology fails with a PluginError naming it.
  bool reads_topology = false;
  /// Under mpirun, the systems it builds may be split over the ranks (docs/scale-out.md): every rank runs the bench,
  /// so the bench must drive its systems only in ways that stay alike on every rank: runs, statistics, services
  /// that keep themselves alike (ReplicatedService, such as the host runtime), and components' own interfaces only
  /// through a client shared with every rank (System::share; ahbm::BenchMemClient for memory requests).
  bool splits = false;
};

class Bench {
 public:
  virtual ~Bench() = default;
  virtual void run(BenchContext& ctx) = 0;
};

}  // namespace kbsim
