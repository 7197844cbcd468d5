// Where a run's systems run: each whole in this process (this class, as it
// is), or each in parts over the processes of a job (a placement the module
// above this one provides, over MPI). A run asks its placement for the
// executor of each system it builds, runs its bench through it so that a
// job's processes leave together, and lets it report how the systems ran.
// Nothing else of a run knows whether its systems are whole.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "component/executor.hpp"

namespace kbsim::json {
class JsonWriter;
}

namespace kbsim::core {

struct Elaboration;

class Placement {
 public:
  virtual ~Placement() = default;
  /// Whether systems built from now on run in parts.
  virtual bool in_parts() const noexcept { return false; }
  /// The executor of a new system of `elaboration` (empty: the local one); ConfigError if it cannot run as placed.
  virtual MakeExecutor executor(const std::shared_ptr<const Elaboration>& elaboration) {
    (void)elaboration;
    return {};
  }
  /// Run `work` (a bench, a command); the processes of a job leave it together: an error on one ends every one.
  virtual void together(const std::function<void()>& work) { work(); }
  /// Lines for the printed summary on how `systems` ran (none for whole ones).
  virtual std::vector<std::string> summary(const std::vector<std::unique_ptr<Simulation>>& systems) const {
    (void)systems;
    return {};
  }
  /// Fields of results.json's host section on how `systems` ran (none for whole ones).
  virtual void write_host(json::JsonWriter& w, const std::vector<std::unique_ptr<Simulation>>& systems) const {
    (void)w;
    (void)systems;
  }
};

}  // namespace kbsim::core
