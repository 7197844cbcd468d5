// Running one plugin-provided command (kbsim/command.hpp): its resolved
// options, the configured topology, and fresh systems on demand.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kbsim/command.hpp"

namespace kbsim::core {

class Registry;

class CommandRunner final : public CommandContext {
 public:
  CommandRunner(const Registry& registry, Params options, std::filesystem::path topology,
                std::vector<std::string> overrides);

  const Params& options() const noexcept override { return options_; }
  const Graph& topology() override;
  std::unique_ptr<System> build(const Graph& graph) override;
  std::string topology_json() override;
  std::string view(std::string_view name) override;

 private:
  const Registry& registry_;
  Params options_;
  std::filesystem::path file_;
  std::vector<std::string> overrides_;
  std::optional<Graph> topology_;
};

}  // namespace kbsim::core
