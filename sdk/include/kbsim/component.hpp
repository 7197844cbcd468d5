// The component ABI: what a plugin author writes.
//
// Lifecycle: construct (read params, look up ports, register stats)
//   -> setup() once the whole graph exists -> on_message / on_flit / on_timer
//   -> finish() to fold final statistics.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kbsim/errors.hpp"
#include "kbsim/flit_times.hpp"
#include "kbsim/graph.hpp"
#include "kbsim/message.hpp"
#include "kbsim/params.hpp"
#include "kbsim/services.hpp"
#include "kbsim/time.hpp"

namespace kbsim {

using NodeIndex = std::uint32_t;
using PortIndex = std::uint32_t;
inline constexpr PortIndex kNoPort = ~PortIndex{0};
/// A routing view (see RouteView in graph.hpp); 0 is "all".
using ViewId = std::uint8_t;
class Component;

/// One end of a link as a component sees it.
struct Port {
  std::string_view label;  ///< the edge kind, e.g. "noc", "ucie", "mesh"
  std::string_view peer;   ///< id of the node at the other end
  NodeIndex peer_index;
};

/// A path through the graph, computed and cached by the core.
/// `ports[k]` is the out-port to take at `nodes[k]`; the last node has none.
struct Route {
  std::vector<NodeIndex> nodes;
  std::vector<PortIndex> ports;
  Tick cost = 0;  ///< the routing cost the path was chosen by: ps, or nm under RouteMetric::kDistance

  /// The out-port at `node`, or kNoPort if the node is not on the path (or is its end).
  PortIndex out_port_at(NodeIndex node) const noexcept {
    for (std::size_t k = 0; k < ports.size(); ++k)
      if (nodes[k] == node) return ports[k];
    return kNoPort;
  }
};

/// One flit of a message, as a flit-aware component receives it.
struct Flit {
  Message* msg;         ///< shared by all flits of the message
  std::uint32_t index;  ///< 0 .. count-1
  std::uint32_t count;
  std::uint32_t bytes;  ///< bytes of this flit (the last may be partial; 0 for control messages)
  std::uint32_t hop;    ///< links crossed so far; index into msg->route->ports
  bool first() const noexcept { return index == 0; }
  bool last() const noexcept { return index + 1 == count; }
};

/// A message's flits on their way to one node as a train the core advances as a whole (docs/architecture.md, "Flit
/// trains advanced as a whole"). Valid while the core holds it: a stale id is ignored.
struct TrainId {
  std::uint32_t slot = ~0u;
  std::uint32_t generation = 0;
  bool valid() const noexcept { return slot != ~0u; }
};

/// A flit train as its receiver sees it: flits [0, lim) arrive at the times `arrive` gives, unless another message
/// meets them on the way (then the core cuts the train: on_train_cut); flits [lim, count) come one by one (on_flit).
struct Train {
  TrainId id;
  Message* msg;
  const FlitTimes* arrive;  ///< when each flit has arrived here
  std::uint32_t count;      ///< flits of the whole message
  std::uint32_t lim;        ///< flits that arrive as `arrive` says
  std::uint32_t whole;      ///< flits the receiver advanced as a whole (on_train_cut: before the cut)
  std::uint32_t hop;        ///< links crossed so far, as Flit::hop
  std::uint32_t full_bytes, last_bytes;

  std::uint32_t bytes_of(std::uint32_t i) const noexcept { return i + 1 < count ? full_bytes : last_bytes; }
  /// Bytes of flits [from, to).
  std::uint64_t bytes(std::uint32_t from, std::uint32_t to) const noexcept {
    if (from >= to) return 0;
    return std::uint64_t{to - from} * full_bytes - (to == count ? full_bytes - last_bytes : 0);
  }
  Flit flit(std::uint32_t i) const noexcept { return {msg, i, count, bytes_of(i), hop}; }
};

/// Identifies a scheduled event so it can be cancelled.
struct EventId {
  std::uint32_t slot = ~0u;
  std::uint32_t generation = 0;
};

enum class LogLevel { kDebug, kInfo, kWarn, kError };

/// A statistic's storage, owned by the core. Counters are exact integers;
/// values are real numbers (e.g. busy time in ns).
struct Stat {
  std::uint64_t count = 0;
  double value = 0.0;
};

struct ComponentContext;

/// Services the core provides to components. Plugins only call these through
/// Component's protected helpers.
class Simulator {
 public:
  virtual Tick now() const noexcept = 0;
  virtual void send(NodeIndex from, PortIndex out, Ref<Message> msg, Tick at) = 0;
  virtual void forward(NodeIndex from, PortIndex out, const Flit& flit, Tick at) = 0;
  virtual EventId schedule(NodeIndex self, Tick at, std::uint64_t tag, Ref<Message> msg, std::uint8_t priority) = 0;
  virtual void cancel(EventId id) noexcept = 0;
  /// The cached minimum-cost path within `view`; throws ConfigError naming both ends if none.
  virtual const Route& route(NodeIndex from, NodeIndex to, ViewId view) = 0;
  virtual ViewId find_view(std::string_view name) const = 0;  ///< throws ConfigError if absent
  /// The graph's system-wide attributes (empty for explicit topologies).
  virtual std::span<const RawParam> attrs() const noexcept = 0;
  virtual NodeIndex find_node(std::string_view id) const = 0;             ///< throws ConfigError if absent
  virtual NodeIndex lookup_node(std::string_view id) const noexcept = 0;  ///< kNoNode if absent
  virtual std::string_view node_id(NodeIndex n) const noexcept = 0;
  /// What node `n`'s component is given at construction (its views stay valid for the simulation's lifetime).
  virtual ComponentContext context(NodeIndex n) const noexcept = 0;
  virtual Stat& stat(NodeIndex self, std::string_view name) = 0;
  virtual void set_transit_cost(NodeIndex self, Tick cost) = 0;
  virtual void log(NodeIndex self, LogLevel level, std::string_view text) = 0;
  virtual void request_stop() noexcept = 0;
  /// Time a 0-byte message takes along `route`: its links' latencies plus the
  /// transit cost of every node between the ends (off the request channel).
  virtual Tick control_latency(const Route& route) const = 0;
  /// Another node's component (for sibling interfaces such as ahbm::Translator).
  virtual Component& component(NodeIndex n) = 0;
  /// The service registered under `name` on this system (created on first
  /// use), or nullptr when no plugin provides it here.
  virtual Service* find_service(std::string_view name) = 0;
  /// Op-log hook: `self` got a shared resource it asked for with `msg`, so its
  /// service of `msg` (if a data operation) starts now. A no-op without an op log.
  virtual void op_resume(NodeIndex self, const Message& msg) = 0;

  // Flit trains (ComponentInfo::trains). In on_train, hand the train on as a whole: flit i is ready for out-port
  // `out` at ready.at(i). False (nothing done): the core cannot take it so, and the receiver takes it flit by flit.
  virtual bool forward_train(NodeIndex from, PortIndex out, const Train& train, const FlitTimes& ready) = 0;
  /// Another message meets train `id`, which `self` advanced as a whole, now: its flits still to come go flit by flit
  /// from here (the core calls on_train_cut first), and `self` holds it no more.
  virtual void cut_train(NodeIndex self, TrainId id) = 0;
  /// Every flit of train `id` has passed `self`: it holds it no more.
  virtual void done_train(NodeIndex self, TrainId id) = 0;
  /// Hand the flits of `msg` (full ones of `full_bytes`, the last what is left of msg->bytes) to out-port `out` at
  /// times `at` (>= now, in order) as one train: what at.size() timers set now would do, timer i (on_timer(tag + i,
  /// msg)) forwarding flit i. `self` holds it; it cuts it (cut_train) before it forwards anything else on that port
  /// while flits of it are still to go, and the core then fires the timers of those. An invalid id: not taken
  /// (the times do not make a train the core can carry whole); set the timers.
  virtual TrainId send_train(NodeIndex from, PortIndex out, Ref<Message> msg, std::span<const Tick> at,
                             std::uint32_t full_bytes, std::uint64_t tag) = 0;

 protected:
  ~Simulator() = default;
};

/// What a component is given at construction. The views stay valid for the
/// simulation's lifetime.
struct ComponentContext {
  std::string_view id;
  std::string_view impl;
  NodeIndex index;
  const Params* params;
  std::span<const Port> in_ports;
  std::span<const Port> out_ports;
  Simulator* sim;     ///< the core, as this component sees it
  const Tick* clock;  ///< the core's current time, which now() reads without a call
};

class Component {
 public:
  explicit Component(const ComponentContext& ctx) : sim_(ctx.sim), clock_(ctx.clock), index_(ctx.index) {}
  Component(const Component&) = delete;
  Component& operator=(const Component&) = delete;
  virtual ~Component() = default;

  /// Called once the whole graph exists, before time 0 runs.
  virtual void setup() {}
  /// A whole message arrived (after its last flit) on in-port `in`.
  virtual void on_message(PortIndex in, Ref<Message> msg) {
    (void)in;
    (void)msg;
    fail("received a message but handles none");
  }
  /// One flit arrived. Only called on components whose info says `flit_aware`.
  virtual void on_flit(PortIndex in, const Flit& flit) {
    (void)in;
    (void)flit;
    fail("received a flit but is not flit-aware");
  }
  /// A flit train arrived: its first flit now, the others at the times it says (components whose info says
  /// `trains`). Return true after handing it on as a whole (forward_train), or false to take it flit by flit: on_flit
  /// then runs for each flit at its time, starting with the first now.
  virtual bool on_train(PortIndex in, const Train& train) {
    (void)in;
    (void)train;
    return false;
  }
  /// Flits [keep, train.whole) of a train this component advanced as a whole did not pass as computed (another
  /// message met them here or before): undo what they did. They come again one by one (on_flit).
  virtual void on_train_cut(const Train& train, std::uint32_t keep) {
    (void)train;
    (void)keep;
  }
  /// A timer this component scheduled fired.
  virtual void on_timer(std::uint64_t tag, Ref<Message> msg) {
    (void)tag;
    (void)msg;
    fail("a timer fired but the component handles none");
  }
  /// Called once after the run; fold final statistics here.
  virtual void finish() {}

  std::string_view id() const noexcept { return sim_->node_id(index_); }
  NodeIndex index() const noexcept { return index_; }
  /// Its parameters as configured (the topology's attributes over the declared defaults): read-only, for a
  /// bench or a report that asks a block what it was built with (a roofline's peaks).
  const Params& params() const noexcept { return *context().params; }

 protected:
  Tick now() const noexcept { return *clock_; }
  std::span<const Port> in_ports() const noexcept { return context().in_ports; }
  std::span<const Port> out_ports() const noexcept { return context().out_ports; }

  /// Send a whole message on out-port `out`, handing it to the link `delay` from now.
  void send(PortIndex out, Ref<Message> msg, Tick delay = 0) { sim_->send(index_, out, std::move(msg), later(delay)); }
  /// Forward one flit on out-port `out`, handing it to the link at absolute time `at` (>= now).
  void forward(PortIndex out, const Flit& flit, Tick at) { sim_->forward(index_, out, flit, at); }
  /// Fire on_timer(tag, msg) `delay` from now. Lower priority runs first at equal times.
  EventId schedule(Tick delay, std::uint64_t tag = 0, Ref<Message> msg = {}, std::uint8_t priority = 128) {
    return sim_->schedule(index_, later(delay), tag, std::move(msg), priority);
  }
  /// now() + delay, or kNever when that would run past the 64-bit clock (the core refuses it, naming you).
  Tick later(Tick delay) const noexcept {
    const Tick t = now();
    return delay >= kNever - t ? kNever : t + delay;
  }
  void cancel(EventId id) noexcept { sim_->cancel(id); }
  /// Flit trains: see Simulator::forward_train, cut_train and done_train.
  bool forward_train(PortIndex out, const Train& train, const FlitTimes& ready) {
    return sim_->forward_train(index_, out, train, ready);
  }
  void cut_train(TrainId id) { sim_->cut_train(index_, id); }
  void done_train(TrainId id) { sim_->done_train(index_, id); }
  TrainId send_train(PortIndex out, Ref<Message> msg, std::span<const Tick> at, std::uint32_t full_bytes,
                     std::uint64_t tag) {
    return sim_->send_train(index_, out, std::move(msg), at, full_bytes, tag);
  }

  /// The cached path from this node to `dst` within routing view `view`
  /// (default "all"); throws ConfigError naming both ends if none exists.
  const Route& route_to(NodeIndex dst, ViewId view = 0) { return sim_->route(index_, dst, view); }
  /// The cached path between any two nodes (e.g. a relay's onward leg, for a latency estimate).
  const Route& route_between(NodeIndex from, NodeIndex to, ViewId view = 0) { return sim_->route(from, to, view); }
  /// A routing view by name ("all", or one the topology declares).
  ViewId find_view(std::string_view name) const { return sim_->find_view(name); }
  /// System-wide attributes of a generated topology (e.g. the memory map).
  std::span<const RawParam> system_attrs() const noexcept { return sim_->attrs(); }
  /// The id of any node.
  std::string_view node_id(NodeIndex n) const noexcept { return sim_->node_id(n); }
  NodeIndex find_node(std::string_view node_id) const { return sim_->find_node(node_id); }
  /// A node that may not exist (e.g. the one an address decodes to): kNoNode if absent.
  NodeIndex lookup_node(std::string_view node_id) const noexcept { return sim_->lookup_node(node_id); }
  /// The out-port whose link leads to `peer`, or kNoPort.
  PortIndex out_port_to(NodeIndex peer) const noexcept {
    const std::span<const Port> ports = out_ports();
    for (PortIndex p = 0; p < ports.size(); ++p)
      if (ports[p].peer_index == peer) return p;
    return kNoPort;
  }

  /// The storage of a statistic this component declares (StatDef, below).
  Stat& stat(const struct StatDef& def);
  /// The cost least-time routing charges for passing through this node (e.g. its per-transaction overhead).
  void set_transit_cost(Tick cost) { sim_->set_transit_cost(index_, cost); }
  void log(LogLevel level, std::string_view text) { sim_->log(index_, level, text); }
  void request_stop() noexcept { sim_->request_stop(); }
  Tick control_latency(const Route& r) const { return sim_->control_latency(r); }
  Component& peer(NodeIndex n) const { return sim_->component(n); }
  /// A typed service of this system (kbsim/services.hpp); ConfigError if no plugin provides it.
  template <NamedService T>
  T& service() const {
    if (T* s = find_service<T>()) return *s;
    throw no_service(T::kServiceName);
  }
  /// A typed service of this system, or nullptr when none is provided.
  template <NamedService T>
  T* find_service() const {
    return service_cast<T>(sim_->find_service(T::kServiceName));
  }

  /// Abort the simulation with an error naming this component and the sim time.
  [[noreturn]] void fail(std::string_view what) const {
    std::string t = std::to_string(ticks_to_ns(now()));
    while (t.back() == '0') t.pop_back();
    if (t.back() == '.') t.pop_back();
    throw SimError("t=" + t + " ns: " + std::string(id()) + ": " + std::string(what));
  }

 private:
  ComponentContext context() const noexcept;
  // Only what the hot path reads, beside the vtable pointer, so that the component's own first members share its
  // cache line; the rest of the context (id, parameters, ports) the core gives on demand.
  Simulator* sim_;
  const Tick* clock_;
  NodeIndex index_;
};

/// Self-description of a component type; feeds `kbsim info` and validation.
struct PortSpec {
  std::string label;  ///< edge kind this component accepts, or "*" for any
  std::string doc;
  /// Names of the message types that may arrive on it (message_types<A, B>()); empty: any. A message of
  /// another type is a simulation error naming both ends and both types.
  std::vector<std::string> messages = {};
};

/// The names of message types M... (each has `static constexpr std::string_view kName`), for PortSpec::messages.
template <class... M>
std::vector<std::string> message_types() {
  return {std::string(M::kName)...};
}

enum class StatKind { kCounter, kValue };

struct StatSpec {
  std::string name;
  StatKind kind = StatKind::kCounter;
  std::string unit;
  std::string doc;
};

/// A statistic declared once, as a constant of the component:
///
///   static constexpr kbsim::StatDef kStatSent{"sent", kbsim::StatKind::kCounter, "packets", "packets sent"};
///
/// info() lists it (`i.stats = {kStatSent, ...}`, which feeds `kbsim info` and
/// results.json) and the constructor binds its storage (`sent_(stat(kStatSent))`).
struct StatDef {
  const char* name;
  StatKind kind;
  const char* unit;
  const char* doc;
  operator StatSpec() const { return {name, kind, unit, doc}; }  // NOLINT: the declaration is the spec
};

inline Stat& Component::stat(const StatDef& def) { return sim_->stat(index_, def.name); }
inline ComponentContext Component::context() const noexcept { return sim_->context(index_); }

struct ComponentInfo {
  std::string type;  ///< unique type name, e.g. "mesh_node"
  std::string summary;
  std::vector<ParamSpec> params;
  std::vector<PortSpec> ports;
  std::vector<StatSpec> stats;
  bool flit_aware = false;  ///< receives on_flit per flit instead of on_message per message
  /// (flit-aware) may take a message's flits as a train, advanced as a whole (on_train)
  bool trains = false;
  /// The component's promise about time, for runs split over processes (docs/scale-out.md, "Lookahead"): the name of
  /// one of its float parameters, in ns, such that nothing it sends leaves sooner than that after the moment it acts
  /// (an event it handles, a call it gets). A link it sends on then gives a split run's windows its latency plus
  /// this value. Empty: no promise (0). A message sent across ranks sooner than promised is an error naming it.
  std::string send_delay_param;
};

}  // namespace kbsim
