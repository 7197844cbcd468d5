#include "run/run_state.hpp"

#include <algorithm>
#include <chrono>

#include "cluster/world.hpp"
#include "component/route_table.hpp"
#include "kbsim/errors.hpp"
#include "run/cluster_transport.hpp"
#include "split/split_executor.hpp"

namespace kbsim::core {

RunState::RunState(const Registry& registry, std::string partition, bool nested, std::string refusal)
    : registry_(registry), partition_(std::move(partition)), refusal_(std::move(refusal)) {
  split_ = !nested && cluster::world().size > 1 && partition_ != "none";
}

RunState::~RunState() = default;

RunState::Elaborated& RunState::elaborated(const Graph& graph, const std::shared_ptr<const Graph>& shared,
                                           Graph* movable) {
  auto same = std::find_if(elaborated_.rbegin(), elaborated_.rend(),
                           [&](const Elaborated& e) { return e.graph.get() == &graph || *e.graph == graph; });
  if (same != elaborated_.rend()) return *same;
  std::shared_ptr<const Graph> kept = shared    ? shared
                                      : movable ? std::make_shared<const Graph>(std::move(*movable))
                                                : std::make_shared<const Graph>(graph);
  auto elaboration = elaborate(*kept, registry_);
  auto routes = RouteTable::for_elaboration(elaboration);
  return elaborated_.emplace_back(Elaborated{std::move(kept), std::move(elaboration), std::move(routes), nullptr});
}

Simulation& RunState::build(const Graph& graph, const std::shared_ptr<const Graph>& shared, Graph* movable) {
  const auto t0 = std::chrono::steady_clock::now();
  Elaborated& e = elaborated(graph, shared, movable);
  if (!split_) {
    systems_.push_back(std::make_unique<Simulation>(e.elaboration, registry_, e.routes));
  } else {                                               // under mpirun: this rank's part of the system
    if (!refusal_.empty()) throw ConfigError(refusal_);  // every rank builds alike, so every rank refuses alike
    const cluster::World& world = cluster::world();
    if (!e.partition)
      e.partition =
          std::make_shared<const Partition>(partition(*e.elaboration, world.size, partition_method(partition_)));
    const Split split{e.partition.get(), world.rank, &transport()};
    systems_.push_back(std::make_unique<Simulation>(e.elaboration, registry_, e.routes, split_executor(split)));
  }
  graphs_.push_back(e.graph);
  build_wall_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return *systems_.back();
}

Transport& RunState::transport() {
  if (!transport_) transport_ = std::make_unique<ClusterTransport>();
  return *transport_;
}

void RunState::add_nested(Tick sim_time, std::uint64_t events, double build_wall_s) {
  nested_sim_time_ += sim_time;
  nested_events_ += events;
  build_wall_s_ += build_wall_s;
}

Tick RunState::sim_time() const {
  Tick t = 0;
  for (const auto& s : systems_) t += s->now();
  return t + nested_sim_time_;
}

std::uint64_t RunState::events() const {
  std::uint64_t n = 0;
  for (const auto& s : systems_) n += s->system().events();
  return n + nested_events_;
}

}  // namespace kbsim::core
