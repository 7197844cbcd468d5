// How a simulation runs its events. The simulation (simulation.hpp) knows the
// model: nodes, wires, delivery, routing, services. Its executor knows where
// the events run: all in this process (LocalExecutor, below), or in parts over
// the processes of a job, which the module above this one provides (through
// its Placement, placement.hpp). The simulation calls its executor to run, and at
// the few points where a part matters: a component that is not run here, a
// message for a node that is not, the bench acting outside a run, the end of a
// run (statistics gathered), an op log that must merge records. Everything
// else, the event loop included, is the simulation's own.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fabric/link.hpp"
#include "kbsim/component.hpp"
#include "kbsim/errors.hpp"
#include "sim/engine.hpp"

namespace kbsim::core {

class OpLog;
class Registry;
class Simulation;

class Executor {
 public:
  virtual ~Executor() = default;

  /// Whether node `n`'s component runs here: its events, its statistics, what it sends. (Every component is
  /// built and set up everywhere; routes need every node's transit cost, and the bench may call any.)
  virtual bool runs(NodeIndex n) const noexcept = 0;
  /// What a component that does not run here sees of the core (nullptr when all run here).
  virtual Simulator* elsewhere() noexcept = 0;
  /// The number of processes the system runs in (1: this one).
  virtual unsigned parts() const noexcept = 0;

  /// Run the events up to `t` (or until a component asks to stop).
  virtual void run_until(Tick t) = 0;
  /// The time outside any handler: where the last run ended, as the bench sees it.
  virtual Tick time() const noexcept = 0;
  /// Whether nothing is pending anywhere.
  virtual bool idle() const noexcept = 0;
  /// Events run so far, in every part.
  virtual std::uint64_t events() const noexcept = 0;

  /// The bench or a setup asked to stop outside a run: true if the executor takes it (the next run returns at once
  /// everywhere); false: the engine's own stop.
  virtual bool stop_outside_run() noexcept { return false; }
  /// An error of a component's setup or finish: false, it is thrown now; true, it is kept to end every part
  /// together at the next exchange.
  virtual bool hold(const Error&) { return false; }
  /// After every component here finished (SimulatedSystem::finish).
  virtual void finished() {}
  /// Node `from` schedules outside any handler (a bench through its interface, or a setup).
  virtual void outside_handler(NodeIndex /*from*/) {}

  /// A message on `link`, whose receiver does not run here, leaving at `start` (see Simulation::deliver).
  virtual void send_away(const Link& link, Ref<Message> msg, std::uint32_t hop, Link::Shape shape, Tick start) = 0;
  /// A flit on `link`, whose receiver does not run here, arriving at `arrive`.
  virtual void forward_away(const Link& link, const Flit& flit, Tick arrive) = 0;

  /// The op log is set (nullptr: off). Returns whether events must keep their scheduler's count and note their
  /// place (tie, place_event) so that the parts' records merge in one process's order.
  virtual bool set_op_log(OpLog*) { return false; }
  /// Event slot `slot` was scheduled by `from` (only when set_op_log returned true).
  virtual void tie(std::uint32_t /*slot*/, NodeIndex /*from*/) {}
  /// An event of priority `priority` is about to run (only when set_op_log returned true).
  virtual void place_event(std::uint32_t /*priority*/) {}

  /// What components wait for, by node: this process's in `mine`, made the whole system's.
  virtual void gather_waiting(std::vector<std::pair<NodeIndex, std::string>>& /*mine*/) {}

 protected:
  // An executor's ways into its simulation, and no others.
  static Engine& engine(Simulation& s) noexcept;
  static const Engine& engine(const Simulation& s) noexcept;
  /// The event loop up to `t` (`advance`: the clock moves to `t` if nothing is left before it); true if a stop
  /// ended it.
  static bool run_events(Simulation& s, Tick t, bool advance = true);
  /// The order an event scheduled now by `from` for `at` gets (docs/architecture.md, "The order of simultaneous
  /// events").
  static Order order_for(Simulation& s, Tick at, NodeIndex from);
  /// An arrival at node `to` (which runs here) scheduled with the order `order` its sender's part gave it.
  static Event& arrival(Simulation& s, Tick at, Order order, EventKind kind, NodeIndex to, EventId* id);
  /// Every out-port's wire and its load, node by node; every node's statistics (Simulation::node_stats).
  static std::vector<Wire>& wires(Simulation& s) noexcept;
  static std::vector<Load>& loads(Simulation& s) noexcept;
  static std::vector<Stat>& stats(Simulation& s) noexcept;
  static const Registry& registry(const Simulation& s) noexcept;
  /// A SimError naming `node` and the time.
  [[noreturn]] static void fail(const Simulation& s, NodeIndex node, const std::string& what);
  /// The executor of `s`.
  static const Executor& of(const Simulation& s) noexcept;
};

/// All events in this process.
class LocalExecutor final : public Executor {
 public:
  explicit LocalExecutor(Simulation& sim) : sim_(sim), engine_(engine(sim)) {}
  bool runs(NodeIndex) const noexcept override { return true; }
  Simulator* elsewhere() noexcept override { return nullptr; }
  unsigned parts() const noexcept override { return 1; }
  void run_until(Tick t) override { run_events(sim_, t); }
  Tick time() const noexcept override { return engine_.now(); }
  bool idle() const noexcept override { return engine_.empty(); }
  std::uint64_t events() const noexcept override { return engine_.events(); }
  void send_away(const Link&, Ref<Message>, std::uint32_t, Link::Shape, Tick) override { nowhere(); }
  void forward_away(const Link&, const Flit&, Tick) override { nowhere(); }

 private:
  [[noreturn]] static void nowhere();
  Simulation& sim_;
  const Engine& engine_;
};

/// Makes the executor of a simulation, before its wires and components are built (it may not use them yet).
using MakeExecutor = std::function<std::unique_ptr<Executor>(Simulation&)>;

}  // namespace kbsim::core
