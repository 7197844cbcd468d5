// Commands plugins provide (`kbsim probe`, `kbsim web`): a subcommand each,
// with the options it declares, run by the command runner.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "kbsim/command.hpp"

namespace kbsim::cli {

class PluginCommands {
 public:
  /// A subcommand of `app` for each command `reg` provides, but those named in `builtin` (built-ins win).
  void add(CLI::App& app, Common& common, const core::Registry& reg, const std::vector<std::string>& builtin);
  /// The exit code of the one parsed, or nothing when none was.
  std::optional<int> run_parsed(const Common& common, const core::Registry& reg);

 private:
  /// One command as a subcommand: its declared options, as text until parsed.
  struct Entry {
    const CommandType* type;
    std::string library;  ///< the path of the library that provides it
    CLI::App* app;
    std::vector<std::string> values;  ///< parallel to type->info.options
    std::vector<bool> flags;          ///< parallel too, for bool options
  };
  void declare(Entry& e);
  int run(const Common& common, const core::Registry& reg, Entry& e);
  std::deque<Entry> entries_;
};

}  // namespace kbsim::cli
