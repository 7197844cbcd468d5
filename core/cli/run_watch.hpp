// What watches a `kbsim run` from outside: Ctrl-C / SIGTERM and a wall-time
// budget (--max-wall) stop it at the next event boundary, and on a terminal a
// progress line shows sim time, events and the rate while it runs.
#pragma once

namespace kbsim::cli {

class RunWatch {
 public:
  /// `max_wall_s` <= 0: no budget.
  explicit RunWatch(double max_wall_s);
  ~RunWatch();
  RunWatch(const RunWatch&) = delete;
  RunWatch& operator=(const RunWatch&) = delete;
  /// Why the run was stopped: "SIGINT", "SIGTERM", "--max-wall", or "" if it was not.
  static const char* reason() noexcept;
  /// Whether a watch installs its SIGINT/SIGTERM handlers (default: it does). A program that embeds the command
  /// line and watches for those signals itself (the Python module: Python's own Ctrl-C) turns them off and stops
  /// a run with interrupt().
  static void handle_signals(bool on) noexcept;
  /// Stop the watched run as the signal `sig` would (async-signal-safe). Called before the run's watch exists
  /// (the run is starting on another thread), it stops the run as soon as the watch is made.
  static void interrupt(int sig) noexcept;
  /// Forget an interrupt from an earlier run: a program that runs the command line more than once calls it before
  /// each run starts.
  static void reset() noexcept;
};

}  // namespace kbsim::cli
