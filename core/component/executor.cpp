// An executor's ways into its simulation (executor.hpp).
#include "component/executor.hpp"

#include "component/simulation.hpp"

namespace kbsim::core {

Engine& Executor::engine(Simulation& s) noexcept { return s.engine_; }
const Engine& Executor::engine(const Simulation& s) noexcept { return s.engine_; }
bool Executor::run_events(Simulation& s, Tick t, bool advance) { return s.run_events(t, advance); }
Order Executor::order_for(Simulation& s, Tick at, NodeIndex from) { return s.order_for(at, from); }

Event& Executor::arrival(Simulation& s, Tick at, Order order, EventKind kind, NodeIndex to, EventId* id) {
  Event& ev = s.engine_.schedule(at, 128, order, id);
  ev.target = &s;
  ev.hint = s.components_[to].get();
  ev.set_kind(kind);
  return ev;
}

std::vector<Wire>& Executor::wires(Simulation& s) noexcept { return s.wires_; }
std::vector<Load>& Executor::loads(Simulation& s) noexcept { return s.loads_; }
std::vector<Stat>& Executor::stats(Simulation& s) noexcept { return s.stats_; }
const Registry& Executor::registry(const Simulation& s) noexcept { return s.registry_; }
void Executor::fail(const Simulation& s, NodeIndex node, const std::string& what) { fail_at(s, node, what); }
const Executor& Executor::of(const Simulation& s) noexcept { return *s.exec_; }

void LocalExecutor::nowhere() {
  throw SimError("internal: a message for a node that runs nowhere (every node runs in this process)");
}

}  // namespace kbsim::core
