// Plugin-provided commands: `kbsim NAME [--option value]...` runs a command
// a plugin registered (kbsim::add_command<T>(plugin)). The core parses the
// shared options (--plugins, --components, --topology, --set, --log-level)
// and the command's own, declared as parameters: a bool parameter is a flag
// (--json), any other takes a value (--case h2d-1hop) and defaults as declared.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kbsim/bench.hpp"
#include "kbsim/graph.hpp"
#include "kbsim/params.hpp"

namespace kbsim {

struct CommandInfo {
  std::string name;  ///< the subcommand, e.g. "probe"
  std::string summary;
  std::vector<ParamSpec> options;  ///< each becomes --<name>
  /// Under mpirun, the systems it builds are split over the ranks, as a bench's that says so (BenchInfo::splits
  /// says what that asks of it); every rank runs the command and rank 0's standard output is shown (a command
  /// that writes files would write them from every rank: it should not say so). A command that does not say so is
  /// refused under mpirun (an interactive one, say).
  bool splits = false;
};

/// What a command is given.
class CommandContext {
 public:
  /// The command's options, resolved against its declarations.
  virtual const Params& options() const noexcept = 0;
  /// The resolved --topology graph (with --set overrides applied).
  virtual const Graph& topology() = 0;
  /// Elaborate a graph into a fresh runnable system, owned by the caller (and gone before Command::run returns).
  virtual std::unique_ptr<System> build(const Graph& graph) = 0;
  /// The resolved topology as JSON, as a run's topology.json has it (every node's parameters resolved).
  virtual std::string topology_json() = 0;
  /// The topology front-end's interactive picture `name` (an SVG; "system" first), or empty when the front-end
  /// has none by that name (config::FrontEnd::view).
  virtual std::string view(std::string_view name) = 0;

 protected:
  ~CommandContext() = default;
};

class Command {
 public:
  virtual ~Command() = default;
  /// Run to completion and print; the return value is the process exit code
  /// (0, or one of ExitCode). Errors are thrown as kbsim::Error.
  virtual int run(CommandContext& ctx) = 0;
};

struct CommandType {
  CommandInfo info;
  Command* (*create)();
};

}  // namespace kbsim
