#include "cli/plugin_commands.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "plugin/params_resolve.hpp"
#include "plugin/registry.hpp"
#include "run/command_runner.hpp"

namespace kbsim::cli {

void PluginCommands::add(CLI::App& app, Common& common, const core::Registry& reg,
                         const std::vector<std::string>& builtin) {
  for (const auto& [name, entry] : reg.commands()) {
    if (std::find(builtin.begin(), builtin.end(), name) != builtin.end()) continue;
    Entry& e = entries_.emplace_back(Entry{entry.type, entry.from.path, nullptr, {}, {}});
    e.app = app.add_subcommand(name, entry.type->info.summary);
    add_common(e.app, common);
    declare(e);
  }
}

void PluginCommands::declare(Entry& e) {
  const auto& opts = e.type->info.options;
  e.values.resize(opts.size());
  e.flags.assign(opts.size(), false);
  for (std::size_t k = 0; k < opts.size(); ++k) {
    const ParamSpec& spec = opts[k];
    try {
      if (spec.type == ParamType::kBool) {
        e.app->add_flag_function(
            "--" + spec.name, [&e, k](std::int64_t n) { e.flags[k] = n > 0; }, spec.doc);
      } else {
        e.app->add_option("--" + spec.name, e.values[k], spec.doc)
            ->type_name(to_string(spec.type))
            ->default_str(format_value(spec.default_value));
      }
    } catch (const CLI::ConstructionError& err) {
      throw PluginError(e.library + ": command '" + e.type->info.name + "' cannot declare option '--" + spec.name +
                        "': " + err.what());
    }
  }
}

std::optional<int> PluginCommands::run_parsed(const Common& common, const core::Registry& reg) {
  for (Entry& e : entries_)
    if (e.app->parsed()) return run(common, reg, e);
  return std::nullopt;
}

int PluginCommands::run(const Common& common, const core::Registry& reg, Entry& e) {
  spdlog::set_level(spdlog::level::from_str(common.log_level));
  const CommandInfo& info = e.type->info;
  std::vector<RawParam> given;
  for (std::size_t k = 0; k < info.options.size(); ++k)
    if (e.app->get_option("--" + info.options[k].name)->count() > 0)
      given.push_back(given_option(info.options[k], e.values[k], e.flags[k]));
  Params options;
  try {
    options = core::resolve_params(info.options, given, "kbsim " + info.name, "kbsim " + info.name);
  } catch (const ConfigError& err) {
    throw UsageError(err.what());
  }
  core::CommandRunner runner(reg, info, std::move(options), topology_file(common), common.sets);
  std::unique_ptr<Command> cmd(e.type->create());
  return runner.run(*cmd);
}

}  // namespace kbsim::cli
