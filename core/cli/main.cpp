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
#include "component/crash.hpp"

namespace {
/// An error message as exactly one line of printable text: a newline a user
/// string carried in shows as "\n", any other control byte as "\xNN".
std::string one_line(const char* what) {
  std::string out;
  for (const char* p = what; *p; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}
}  // namespace

int main(int argc, char** argv) {
  auto logger = spdlog::stderr_color_mt("kbsim");
  logger->set_pattern("kbsim: %l: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::warn);
  kbsim::core::crash::install();
  try {
    return kbsim::cli::run_command_line(argc, argv);
  } catch (const kbsim::Error& e) {
    std::fprintf(stderr, "kbsim: error: %s\n", one_line(e.what()).c_str());
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "kbsim: error: out of memory: the run needs more than this machine can give (a smaller "
                 "system or workload, or a machine with more memory)\n");
    return static_cast<int>(kbsim::ExitCode::kConfig);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kbsim: internal error: %s\n", one_line(e.what()).c_str());
    return static_cast<int>(kbsim::ExitCode::kInternal);
  }
}
