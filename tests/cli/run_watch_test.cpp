// The run's watch as a program that embeds the command line uses it (the Python module): a Ctrl-C that comes while
// a run is still starting, on another thread, stops that run as soon as its watch is made, and is forgotten by the
// next run.
#include "cli/run_watch.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <cstring>

#include "sim/watch.hpp"

namespace kbsim {
namespace {

TEST(RunWatch, AnInterruptBeforeTheWatchIsMadeStopsTheRunItStarts) {
  cli::RunWatch::handle_signals(false);
  cli::RunWatch::reset();
  cli::RunWatch::interrupt(SIGINT);  // Ctrl-C while the run's plugins load
  {
    cli::RunWatch watch(0);
    EXPECT_TRUE(core::watch::stop_requested());
    EXPECT_STREQ(cli::RunWatch::reason(), "SIGINT");
  }
  cli::RunWatch::reset();  // the next run
  {
    cli::RunWatch watch(0);
    EXPECT_FALSE(core::watch::stop_requested());
    EXPECT_STREQ(cli::RunWatch::reason(), "");
  }
  cli::RunWatch::handle_signals(true);
}

}  // namespace
}  // namespace kbsim
