// Running one plugin-provided command (kbsim/command.hpp): its resolved
// options, the configured topology, and fresh systems on demand, placed as a
// command's are (under mpirun, in parts over the
// job's processes, for a command that says it can run so; refused otherwise).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kbsim/command.hpp"

namespace kbsim::core {

class Registry;
class Placement;
struct RouteTable;
struct Elaboration;

class CommandRunner final : public CommandContext {
 public:
  CommandRunner(const Registry& registry, const CommandInfo& info, Params options, std::filesystem::path topology,
                std::vector<std::string> overrides);
  ~CommandRunner();

  /// Run `cmd` and return its exit code. Under mpirun every process runs it and leaves with the others (an error
  /// on one ends all with it); what processes other than the first print on stdout is dropped (their stderr stays:
  /// a crash there is still told).
  int run(Command& cmd);

  const Params& options() const noexcept override { return options_; }
  const Graph& topology() override;
  std::unique_ptr<System> build(const Graph& graph) override;
  std::string topology_json() override;
  std::string view(std::string_view name) override;

 private:
  const Registry& registry_;
  const CommandInfo& info_;
  Params options_;
  std::filesystem::path file_;
  std::vector<std::string> overrides_;
  std::optional<Graph> topology_;
  std::unique_ptr<Placement> placement_;
  /// Each graph built, elaborated once.
  struct Built {
    Graph graph;
    std::shared_ptr<const Elaboration> elaboration;
    std::shared_ptr<RouteTable> routes;
  };
  std::vector<Built> built_;
};

}  // namespace kbsim::core
