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
};

}  // namespace kbsim::cli
