// A simulated system, as its components see the core (the Simulator interface): one
// component per node of an elaboration (component/elaboration.hpp), one Link
// per directed edge, message/flit delivery, routing, the op-log hooks and the
// per-system services. Its executor (executor.hpp) runs the events: in this
// process, or in parts over the processes of a job. What a bench sees of it is
// its system() (simulated_system.hpp).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "component/elaboration.hpp"
#include "component/executor.hpp"
#include "component/op_log.hpp"
#include "component/router.hpp"
#include "component/services.hpp"
#include "component/simulated_system.hpp"
#include "component/trains.hpp"
#include "fabric/link.hpp"
#include "kbsim/bench.hpp"
#include "kbsim/graph.hpp"
#include "kbsim/plugin.hpp"
#include "sim/engine.hpp"

namespace kbsim::core {

class Registry;

/// A system holds at most 2^24 nodes: an event's lane keeps its scheduling node in its low bits, and the delay it
/// was scheduled with (up to 2^40 ps, about 1.1 s) above them.
inline constexpr unsigned kNodeBits = 24;
inline constexpr Tick kMaxOrderDelay = (Tick{1} << (64 - kNodeBits)) - 1;

class Simulation;
/// The receiving port of `link` declares the message types it accepts: fail unless `msg` is one.
void check_type(const Simulation& s, const Link& link, const Message& msg);
/// A send on an out-port `from` does not have.
[[noreturn]] void no_port(const Simulation& s, NodeIndex from, PortIndex out);

class Simulation final : public Simulator, private EventTarget {
 public:
  /// Build a system of `elaboration`: instantiate every component, then call setup() on each in node order.
  /// `routes`: a table shared with other systems of this elaboration (nullptr: a table of its own).
  /// `executor`: makes what runs its events (none: all of them in this process).
  Simulation(std::shared_ptr<const Elaboration> elaboration, const Registry& registry,
             std::shared_ptr<RouteTable> routes = nullptr, const MakeExecutor& executor = {});
  /// The same, elaborating `graph` first.
  ~Simulation();

  using Node = Elaboration::Node;
  /// What it was built from: its nodes (elaboration()->nodes) and links in port order (->links) among the rest.
  const std::shared_ptr<const Elaboration>& elaboration() const noexcept { return el_; }
  /// What a bench sees of it: its statistics and link traffic among the rest.
  SimulatedSystem& system() noexcept { return system_; }

  // Simulator
  /// Inside a handler, the event's time; outside (the bench, the host), the executor's: where the last run ended,
  /// in every part (a part's own clock may have gone past it).
  Tick now() const noexcept override { return engine_.dispatching() ? engine_.now() : exec_->time(); }
  void send(NodeIndex from, PortIndex out, Ref<Message> msg, Tick at) override;
  void forward(NodeIndex from, PortIndex out, const Flit& flit, Tick at) override;
  EventId schedule(NodeIndex self, Tick at, std::uint64_t tag, Ref<Message> msg, std::uint8_t priority) override;
  void cancel(EventId id) noexcept override { engine_.cancel(id); }
  const Route& route(NodeIndex from, NodeIndex to, ViewId view) override;
  ViewId find_view(std::string_view name) const override { return router_.find_view(name); }
  std::span<const RawParam> attrs() const noexcept override { return el_->attrs; }
  NodeIndex find_node(std::string_view id) const override;
  NodeIndex lookup_node(std::string_view id) const noexcept override { return el_->find_node(id); }
  std::string_view node_id(NodeIndex n) const noexcept override { return nodes_[n].id; }
  ComponentContext context(NodeIndex n) const noexcept override {
    const Node& node = nodes_[n];
    return {node.id, node.impl, n, &node.params, node.in, node.out, const_cast<Simulation*>(this), engine_.clock()};
  }
  Stat& stat(NodeIndex self, std::string_view name) override;
  void set_transit_cost(NodeIndex self, Tick cost) override { router_.set_transit(self, cost); }
  void log(NodeIndex self, LogLevel level, std::string_view text) override;
  void request_stop() noexcept override;
  Tick control_latency(const Route& route) const override { return router_.control_latency(route); }
  Component& component(NodeIndex n) override { return *components_[n]; }
  Service* find_service(std::string_view name) override { return services_.find(name, registry_, system_, *this); }
  void op_resume(NodeIndex self, const Message& msg) override {
    if (oplog_ && msg.data_op()) oplog_->restart(self, msg, now());
  }
  bool forward_train(NodeIndex from, PortIndex out, const Train& train, const FlitTimes& ready) override;
  void cut_train(NodeIndex self, TrainId id) override;
  TrainId send_train(NodeIndex from, PortIndex out, Ref<Message> msg, std::span<const Tick> at,
                     std::uint32_t full_bytes, std::uint64_t tag) override;
  void done_train(NodeIndex self, TrainId id) override;

  /// Flit events that trains taken whole stood for beyond their own one each: what a flit-by-flit run of the same
  /// model runs more (SimulatedSystem::events() counts them; the engine's own count is events() less these).
  std::uint64_t train_flits() const noexcept { return train_flits_; }

  /// Its services (those the run provided and those plugins made).
  ServiceBoard& services() noexcept { return services_; }

  /// Free what only running needs (components, services, pending events, wires) and keep what results.json reads:
  /// statistics, the traffic of the wires that carried any, the executor's time and counts. For a finished system
  /// (SimulatedSystem::release); it runs nothing more.
  void release();
  /// What went over link `link` (an index into elaboration()->links, which the wires parallel): live, or as release
  /// kept it.
  Traffic traffic(std::uint32_t link) const noexcept;

  /// Log data operations into `log` (nullptr = off, the default: then the
  /// timing pass does no op-log work at all).
  /// (An executor of several parts holds its records for merging: see op_log.hpp.)
  void set_op_log(OpLog* log);

 private:
  friend class Executor;         // its executors' ways in (Executor's protected helpers)
  friend class SimulatedSystem;  // the bench's view of it
  Tick on_event(Event& ev) override;
  Tick dispatch(Component& c, Event& ev);
  friend class Engine;  // runs on_event directly (Engine::run_until(limit, this))

  /// The wire of out-port `out` of `from`; a simulation error if it has no such port.
  Wire& out_wire(NodeIndex from, PortIndex out) {
    const std::uint32_t begin = port_begin_[from], count = port_begin_[from + 1] - begin;
    if (out >= count) [[unlikely]]
      no_port(*this, from, out);
    return wires_[begin + out];
  }
  /// A wire's occupancy: loads_ runs parallel to wires_, so its index comes from the wire's place.
  Load& load_of(const Wire& wire) noexcept { return loads_[static_cast<std::size_t>(&wire - wires_.data())]; }
  /// A wire's link, found the same way: the three are fetched at once, none waits for another's index.
  const Link& link_of(const Wire& wire) const noexcept {
    return links_[static_cast<std::size_t>(&wire - wires_.data())];
  }
  /// An event scheduled by node `from`, ordered among those of its time and priority as docs/architecture.md,
  /// "The order of simultaneous events", says.
  Event& new_event(Tick at, std::uint8_t priority, EventKind kind, Component* to, NodeIndex from,
                   EventId* id = nullptr);
  /// new_event without a tie: where placing_ is off (a plain wire's send, which a placing system never takes).
  Event& untied_event(Tick at, std::uint8_t priority, EventKind kind, Component* to, NodeIndex from,
                      EventId* id = nullptr);
  /// The order of an event scheduled by `from` for `at` (what new_event gives it).
  Order order_for(Tick at, NodeIndex from);
  /// The lane of an event scheduled by `from` for `at`, as of time `when`.
  static std::uint64_t lane_for(Tick at, Tick when, NodeIndex from) noexcept {
    return (kMaxOrderDelay - std::min<Tick>(at - when, kMaxOrderDelay)) << kNodeBits | from;
  }
  /// Run this process's events up to `t` (the engine's loop, with this simulation's handler inlined into it).
  /// `advance`: the clock moves to `t` when nothing is left before it. Returns whether a stop ended it.
  bool run_events(Tick t, bool advance = true);
  /// new_event when events keep their scheduler's count (placing_): the executor notes it.
  [[gnu::noinline]] Event& tied_event(Tick at, std::uint8_t priority, EventKind kind, Component* to, NodeIndex from,
                                      EventId* id);
  /// A root for an event scheduled by `from` outside any handler: from's index, then from's count of them.
  [[gnu::noinline]] std::uint32_t fresh_root(NodeIndex from);
  void send_general(Wire& wire, NodeIndex from, Ref<Message> msg, Tick at);
  void deliver(const Wire& wire, const Link& link, Ref<Message> msg, std::uint32_t hop, Link::Shape shape, Tick start);

  // Flit trains (trains.cpp).
  /// A message sent whole to a node that takes trains, as one: false if it cannot go so.
  bool send_train(const Wire& wire, const Link& link, Ref<Message>& msg, std::uint32_t hop, Link::Shape shape,
                  Tick start);
  /// A kTrain event: the train's first flit at a node that has not seen it yet, or the next flit of a walk.
  Tick on_train_event(Component& c, Event& ev);
  /// Record `i`'s flits [0, lim) onto the link of `wire`, starting on it at `starts`, each full flit taking `full`
  /// and the last `last`: the link's state and counts, and the next node's record or the whole message's delivery.
  void onto_link(std::uint32_t i, Wire& wire, const FlitTimes& starts, Tick full, Tick last);
  /// Schedule record `i`'s event for flit `flit`, at its time and in its order.
  void arm_train(std::uint32_t i, std::uint32_t flit, Component* to);
  /// The lane of flit `i`'s event at record `h`'s node.
  std::uint64_t train_lane(const TrainHop& h, std::uint32_t i) const noexcept;
  /// Flits [keep, whole) of record `i` did not pass as computed: undo them at its node, on its out-link and beyond.
  void unwind_train(std::uint32_t i, std::uint32_t keep);
  /// Only flits [0, lim) of record `i` arrive as computed: the others come from the node before one by one.
  void shorten_train(TrainId id, std::uint32_t lim);
  /// Free record `i` once nothing needs it: its node does not hold it and no event of it is pending.
  void settle_train(std::uint32_t i);
  /// A view of record `i` for its node.
  Train train_view(std::uint32_t i) {
    Train t = trains_[i].view();
    t.id = trains_.id_of(i);
    return t;
  }

  // What the graph elaborated to (shared with other systems of an equal graph), and views of it.
  std::shared_ptr<const Elaboration> el_;
  const std::vector<Node>& nodes_;
  const std::string_view* ids_;      ///< per node (the elaboration's; a pointer: one load less on every send)
  const std::uint32_t* port_begin_;  ///< per node, and one past the last (the elaboration's)
  const std::vector<Link>& links_;

  // This system's own state.
  Engine engine_;
  std::vector<Wire> wires_;                             ///< every out-port's wire, node by node
  std::vector<Load> loads_;                             ///< parallel to wires_
  std::vector<std::unique_ptr<Component>> components_;  ///< per node
  std::vector<Stat> stats_;                             ///< every node's statistics (node_stats)
  std::vector<std::uint32_t> fresh_roots_;              ///< per node: events it scheduled outside any handler
  Router router_;
  const Registry& registry_;
  ServiceBoard services_;
  bool finished_ = false;  ///< SimulatedSystem::finish ran
  bool released_ = false;  ///< release ran: wires_ and loads_ are gone, kept_traffic_ holds what they carried
  std::vector<std::pair<std::uint32_t, Traffic>> kept_traffic_;  ///< by link, those that carried anything
  OpLog* oplog_ = nullptr;
  /// The executor asked for events to keep their scheduler's count and note their place (Executor::set_op_log).
  /// (With oplog_ set, no send takes the untied hot path.)
  bool placing_ = false;
  std::unique_ptr<Executor> exec_;
  TrainPool trains_;
  /// Flit trains may be advanced as a whole: every node runs here, and no executor notes each event's place.
  bool trains_on_ = false;
  std::uint64_t train_flits_ = 0;  ///< (train_flits)
  SimulatedSystem system_{*this};
};

[[gnu::always_inline]] inline Order Simulation::order_for(Tick at, NodeIndex from) {
  // The root: the running event's if a handler schedules this, else a root of its own (setup, a bench, the host).
  // Then the earlier scheduled first (the longer delay; delays from 2^40 ps, about 1.1 s, on count as equal), then
  // the lower scheduling node; what is still equal comes from one node, in the order it scheduled.
  const std::uint32_t root = engine_.dispatching() ? engine_.running_root() : fresh_root(from);
  return {root, lane_for(at, engine_.now(), from)};
}

/// A system that owns its simulation, made of `args` as Simulation's constructors take them.
/// SimError "t=NOW ns: NODE: what": a fault of the model at `node`, now.
[[noreturn]] void fail_at(const Simulation& s, NodeIndex node, const std::string& what);
/// Where a component type (`info`) declares its statistic `name` among its statistics, in order (its place in a
/// node's table); info.stats.size() if it declares none of that name.
inline std::size_t stat_index(const ComponentInfo& info, std::string_view name) noexcept {
  std::size_t i = 0;
  while (i < info.stats.size() && info.stats[i].name != name) ++i;
  return i;
}

template <class... Args>
requires std::is_constructible_v<Simulation, Args...> std::unique_ptr<SimulatedSystem> simulated(Args&&... args) {
  return std::make_unique<SimulatedSystem>(std::make_unique<Simulation>(std::forward<Args>(args)...));
}
/// A system of `graph`, elaborated for it alone.
inline std::unique_ptr<SimulatedSystem> simulated(const Graph& graph, const Registry& registry) {
  return simulated(elaborate(graph, registry), registry);
}

}  // namespace kbsim::core
