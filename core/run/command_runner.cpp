#include "run/command_runner.hpp"

#include <algorithm>

#include "cluster/world.hpp"
#include "component/placement.hpp"
#include "component/route_table.hpp"
#include "component/simulation.hpp"
#include "report/json.hpp"
#include "split/job_placement.hpp"
#include "topology/topology.hpp"

namespace kbsim::core {

CommandRunner::CommandRunner(const Registry& registry, const CommandInfo& info, Params options,
                             std::filesystem::path topology, std::vector<std::string> overrides)
    : registry_(registry),
      info_(info),
      options_(std::move(options)),
      file_(std::move(topology)),
      overrides_(std::move(overrides)),
      placement_(command_placement(info.name, info.splits)) {}

CommandRunner::~CommandRunner() = default;

int CommandRunner::run(Command& cmd) {
  if (!placement_->in_parts()) return cmd.run(*this);
  cluster::quiet_followers();  // every process computes the same: the first says it
  int code = 0;
  placement_->together([&] { code = cmd.run(*this); });
  return code;
}

const Graph& CommandRunner::topology() {
  if (!topology_) topology_ = load_topology(file_, overrides_, registry_);
  return *topology_;
}

std::unique_ptr<System> CommandRunner::build(const Graph& graph) {
  // Each graph is elaborated once, and its systems share its route table (as a bench's do).
  auto same = std::find_if(built_.begin(), built_.end(), [&](const Built& b) { return b.graph == graph; });
  if (same == built_.end()) {
    auto elaboration = elaborate(graph, registry_);
    built_.push_back({graph, elaboration, RouteTable::for_elaboration(elaboration)});
    same = built_.end() - 1;
  }
  return std::make_unique<SimulatedSystem>(std::make_unique<Simulation>(same->elaboration, registry_, same->routes,
                                                                        placement_->executor(same->elaboration)));
}

std::string CommandRunner::topology_json() {
  const Graph& g = topology();
  return json::write_json_string([&](JsonWriter& w) { write_graph(w, g, registry_); });
}

std::string CommandRunner::view(std::string_view name) { return view_topology(file_, overrides_, registry_, name); }

}  // namespace kbsim::core
