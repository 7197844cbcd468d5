#pragma once

#include "kbsim/errors.hpp"

namespace kbsim::cli {

/// Parse the command line and run one subcommand; returns the exit code.
/// Library errors propagate as kbsim::Error for main to report.
int run_command_line(int argc, char** argv);

}  // namespace kbsim::cli
