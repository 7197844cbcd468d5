#include "run/command_runner.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "cluster/world.hpp"
#include "component/route_table.hpp"
#include "component/simulation.hpp"
#include "report/json.hpp"
#include "run/cluster_transport.hpp"
#include "split/split_executor.hpp"
#include "topology/topology.hpp"

namespace kbsim::core {

CommandRunner::CommandRunner(const Registry& registry, const CommandInfo& info, Params options,
                             std::filesystem::path topology, std::vector<std::string> overrides)
    : registry_(registry),
      info_(info),
      options_(std::move(options)),
      file_(std::move(topology)),
      overrides_(std::move(overrides)) {}

CommandRunner::~CommandRunner() = default;

int CommandRunner::run(Command& cmd) {
  const cluster::World& world = cluster::world();
  if (world.size == 1) return cmd.run(*this);
  if (!info_.splits)
    throw UsageError("kbsim " + info_.name + " runs in one process, not over " + std::to_string(world.size) +
                     " MPI ranks: start it without mpirun (docs/scale-out.md)");
  transport_ = std::make_unique<ClusterTransport>();
  if (world.rank != 0) {  // every rank computes the same: rank 0 says it
    std::fflush(stdout);
    if (const int null = ::open("/dev/null", O_WRONLY); null >= 0 && null != STDOUT_FILENO) {
      ::dup2(null, STDOUT_FILENO);
      ::close(null);
    }
  }
  int code = 0;
  run_together(*transport_, world.rank, world.size, [&] { code = cmd.run(*this); });
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
    built_.push_back({graph, elaboration, RouteTable::for_elaboration(elaboration), nullptr});
    same = built_.end() - 1;
  }
  if (!transport_)
    return std::make_unique<SimulatedSystem>(std::make_unique<Simulation>(same->elaboration, registry_, same->routes));
  // Under mpirun: this rank's part of the system, split as a bench's is by default.
  const cluster::World& world = cluster::world();
  if (!same->partition) same->partition = std::make_shared<const Partition>(partition(*same->elaboration, world.size));
  const Split split{same->partition.get(), world.rank, transport_.get()};
  return std::make_unique<SimulatedSystem>(
      std::make_unique<Simulation>(same->elaboration, registry_, same->routes, split_executor(split)));
}

std::string CommandRunner::topology_json() {
  const Graph& g = topology();
  return json::write_json_string([&](JsonWriter& w) { write_graph(w, g, registry_); });
}

std::string CommandRunner::view(std::string_view name) { return view_topology(file_, overrides_, registry_, name); }

}  // namespace kbsim::core
