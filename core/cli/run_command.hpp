// `kbsim run`: its options (the built-in ones, and those the plugins declare:
// a configuration section's file, an observer's flag), running the bench,
// and the summary it prints.
#pragma once

#include <deque>
#include <string>

#include "cli/common.hpp"
#include "run/bench_runner.hpp"

namespace kbsim::cli {

/// What plugins add to `kbsim run`: an option per configuration section (--NAME FILE) and the observers' flags.
class PluginRunOptions {
 public:
  void add(CLI::App* run, const core::Registry& reg);
  /// Into the run's options: the sections' files (given, or NAME.yaml in `data`) and the flags given.
  void apply(core::RunOptions& opts, const std::filesystem::path& data) const;

 private:
  struct Value {
    std::string name;
    std::string text;
    bool on = false;
    const ParamSpec* spec = nullptr;
  };
  std::deque<Value> sections_, flags_;
  CLI::App* run_ = nullptr;
};

class RunCommand {
 public:
  /// The `run` subcommand of `app`, with its built-in options.
  RunCommand(CLI::App& app, Common& common);
  /// The options `reg`'s plugins declare (before parsing).
  void add_plugin_options(const core::Registry& reg) { plugin_options_.add(app_, reg); }
  bool parsed() const { return app_->parsed(); }
  /// Run the bench asked for and print its summary; the exit code.
  int run(const core::Registry& reg);

 private:
  /// The summary of a finished run; the exit code it ends with.
  int report(core::BenchRunner& runner) const;
  CLI::App* app_;
  Common& common_;
  core::RunOptions opts_;
  std::string out_ = "kbsim-out";
  double max_wall_s_ = 0;
  PluginRunOptions plugin_options_;
};

}  // namespace kbsim::cli
