#include "run/run_state.hpp"

#include <algorithm>
#include <chrono>

#include "component/route_table.hpp"

namespace kbsim::core {

std::shared_ptr<const Graph> RunCache::topology(const std::filesystem::path& file,
                                                const std::vector<std::string>& overrides,
                                                const std::function<Graph()>& load) {
  {
    std::lock_guard hold(mutex_);
    for (const Topology& t : topologies_)
      if (t.file == file && t.overrides == overrides) return t.graph;
  }
  auto graph = std::make_shared<const Graph>(load());
  std::lock_guard hold(mutex_);
  topologies_.push_front({file, overrides, graph});
  if (topologies_.size() > kKept) topologies_.pop_back();
  return graph;
}

std::shared_ptr<const Elaboration> RunCache::elaboration(
    const std::shared_ptr<const Graph>& graph, const std::function<std::shared_ptr<const Elaboration>()>& make) {
  {
    std::lock_guard hold(mutex_);
    for (const Elaborated& e : elaborated_)  // the same graph (a loaded topology), then an equal one
      if (e.graph == graph) return e.elaboration;
    for (const Elaborated& e : elaborated_)
      if (*e.graph == *graph) return e.elaboration;
  }
  auto made = make();
  std::lock_guard hold(mutex_);
  elaborated_.push_front({graph, made});
  if (elaborated_.size() > kKept) elaborated_.pop_back();
  return made;
}

RunState::RunState(const Registry& registry, std::unique_ptr<Placement> placement, std::shared_ptr<RunCache> cache)
    : registry_(registry),
      placement_(std::move(placement)),
      cache_(cache ? std::move(cache) : std::make_shared<RunCache>()) {}

RunState::~RunState() = default;

RunState::Elaborated& RunState::elaborated(const Graph& graph, const std::shared_ptr<const Graph>& shared,
                                           Graph* movable) {
  auto same = std::find_if(elaborated_.rbegin(), elaborated_.rend(),
                           [&](const Elaborated& e) { return e.graph.get() == &graph || *e.graph == graph; });
  if (same != elaborated_.rend()) return *same;
  std::shared_ptr<const Graph> kept = shared    ? shared
                                      : movable ? std::make_shared<const Graph>(std::move(*movable))
                                                : std::make_shared<const Graph>(graph);
  auto elaboration = cache_->elaboration(kept, [&] { return elaborate(*kept, registry_); });
  auto routes = RouteTable::for_elaboration(elaboration);
  return elaborated_.emplace_back(Elaborated{std::move(kept), std::move(elaboration), std::move(routes)});
}

Simulation& RunState::build(const Graph& graph, const std::shared_ptr<const Graph>& shared, Graph* movable) {
  const auto t0 = std::chrono::steady_clock::now();
  Elaborated& e = elaborated(graph, shared, movable);
  systems_.push_back(
      std::make_unique<Simulation>(e.elaboration, registry_, e.routes, placement_->executor(e.elaboration)));
  graphs_.push_back(e.graph);
  build_wall_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return *systems_.back();
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
