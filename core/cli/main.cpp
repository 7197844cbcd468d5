// The kbsim command line: run, list, info, topology, version.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#include <string>

#include "cli/commands.hpp"
#include "cluster/world.hpp"
#include "component/crash.hpp"
#include "kbsim/text.hpp"

int main(int argc, char** argv) {
  auto logger = spdlog::stderr_color_mt("kbsim");
  logger->set_pattern("kbsim: %l: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::warn);
  kbsim::core::crash::install();
  namespace cluster = kbsim::core::cluster;
  cluster::init(&argc, &argv);
  // Under mpirun every process meets the same error (the job is deterministic): the first says it once.
  auto report = [](const std::string& line) {
    if (cluster::leads()) std::fprintf(stderr, "%s\n", line.c_str());
  };
  try {
    const int code = kbsim::cli::run_command_line(argc, argv);
    cluster::finalize();
    return code;
  } catch (const kbsim::Error& e) {
    report("kbsim: error: " + kbsim::one_line(e.what()));
    cluster::finalize();
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "kbsim: error: out of memory: the run needs more than this machine can give (a smaller "
                 "system or workload, or a machine with more memory)\n");
    return static_cast<int>(kbsim::ExitCode::kConfig);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kbsim: internal error: %s\n", kbsim::one_line(e.what()).c_str());
    return static_cast<int>(kbsim::ExitCode::kInternal);
  }
}
