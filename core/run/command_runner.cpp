#include "run/command_runner.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "cluster/world.hpp"
#include "component/partition.hpp"
#include "component/route_table.hpp"
#include "component/simulation.hpp"
#include "kbsim/text.hpp"
#include "report/json.hpp"
#include "run/cluster_transport.hpp"
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
  try {
    code = cmd.run(*this);
  } catch (const std::exception& e) {
    const auto* error = dynamic_cast<const Error*>(&e);
    leave_split(*transport_, world.rank, world.size, error ? error->code() : ExitCode::kInternal, one_line(e.what()),
                dynamic_cast<const RankError*>(&e) != nullptr);
    throw;
  }
  if (auto other = leave_split(*transport_, world.rank, world.size, ExitCode::kOk, "", false)) throw *other;
  return code;
}

const Graph& CommandRunner::topology() {
  if (!topology_) topology_ = load_topology(file_, overrides_, registry_);
  return *topology_;
}

std::unique_ptr<System> CommandRunner::build(const Graph& graph) {
  if (!transport_) return std::make_unique<Simulation>(graph, registry_);
  // Under mpirun: this rank's part of the system, split as a bench's is by default.
  const cluster::World& world = cluster::world();
  auto same = std::find_if(built_.begin(), built_.end(), [&](const Built& b) { return b.graph == graph; });
  if (same == built_.end()) {
    auto elaboration = elaborate(graph, registry_);
    auto parts = std::make_shared<const Partition>(partition(*elaboration, world.size, partition_method("structure")));
    built_.push_back({graph, elaboration, RouteTable::for_elaboration(elaboration), std::move(parts)});
    same = built_.end() - 1;
  }
  const Split split{same->partition.get(), world.rank, transport_.get()};
  return std::make_unique<Simulation>(same->elaboration, registry_, same->routes, &split);
}

std::string CommandRunner::topology_json() {
  const Graph& g = topology();
  return json::write_json_string([&](JsonWriter& w) { write_graph(w, g, registry_); });
}

std::string CommandRunner::view(std::string_view name) { return view_topology(file_, overrides_, registry_, name); }

}  // namespace kbsim::core
