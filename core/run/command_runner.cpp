#include "run/command_runner.hpp"

#include "component/simulation.hpp"
#include "report/json.hpp"
#include "topology/topology.hpp"

namespace kbsim::core {

CommandRunner::CommandRunner(const Registry& registry, Params options, std::filesystem::path topology,
                             std::vector<std::string> overrides)
    : registry_(registry), options_(std::move(options)), file_(std::move(topology)), overrides_(std::move(overrides)) {}

const Graph& CommandRunner::topology() {
  if (!topology_) topology_ = load_topology(file_, overrides_, registry_);
  return *topology_;
}

std::unique_ptr<System> CommandRunner::build(const Graph& graph) {
  return std::make_unique<Simulation>(graph, registry_);
}

std::string CommandRunner::topology_json() {
  const Graph& g = topology();
  return json::write_json_string([&](JsonWriter& w) { write_graph(w, g, registry_); });
}

std::string CommandRunner::view(std::string_view name) { return view_topology(file_, overrides_, registry_, name); }

}  // namespace kbsim::core
