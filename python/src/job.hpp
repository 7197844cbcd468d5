// A kbsim command line run on a thread of its own (docs/python.md), so that the interpreter's thread stays free to
// watch it: Python's Ctrl-C stops the run at its next heartbeat, and a progress display reads how far it got. One
// job at a time per process: a run changes process-wide state (the run's watch, standard output, crash reports).
#pragma once

#include <pybind11/pybind11.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace kbsim::python {

/// Standard output sent to /dev/null while it lives (a command's summary lines, for a quiet call).
class Silenced {
 public:
  Silenced();
  ~Silenced();
  Silenced(const Silenced&) = delete;
  Silenced& operator=(const Silenced&) = delete;

 private:
  int saved_ = -1;
};

class Job {
 public:
  /// Called on the job's thread: when it starts (before the command), and when the command has ended, with its
  /// exit code and error (empty when none).
  using OnStart = std::function<void()>;
  using OnEnd = std::function<void(int code, const std::string& error)>;
  /// Start `kbsim ARGS...`; `quiet`: what it prints on standard output is dropped. Raises kbsim.UsageError if
  /// another job (a run, a sweep or an open kbsim.Session) is under way in this process. While it runs, SIGINT
  /// stops the run at once (as the command's own handler does), then reaches Python's handler.
  Job(std::vector<std::string> args, bool quiet, OnStart on_start = {}, OnEnd on_end = {});
  ~Job();  // waits for the command to end
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  /// Wait until the command ends, watching it from the interpreter's thread: Python's signal handlers run every
  /// 100 ms, and `progress` (if not None) is called with the run's progress. Returns the exit code, or raises the
  /// error it ended with (or what a signal handler or the progress display raised, once the run has stopped).
  int wait(const pybind11::object& progress);

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool ended_ = false;
  int code_ = 0;
  std::string error_;
  std::thread thread_;
};

/// The run's progress so far as a dict: sim_time_ns, events, points_done, points_total.
pybind11::dict progress();
/// Make the processes a sweep forks from a job's thread stop their point at SIGINT or SIGTERM (once, at import).
void watch_signals_in_forked_workers();

/// What Python raised while a run was being watched (a signal handler's exception, a progress display's): the run is
/// stopped as Ctrl-C stops it, and the exception raised once the run has ended. A KeyboardInterrupt is not kept: the
/// run's own end (kbsim.InterruptedRun, a KeyboardInterrupt) says it.
class Watcher {
 public:
  /// Run the interpreter's signal handlers.
  void check_signals();
  /// Call `fn` (Python), catching what it raises.
  void call(const pybind11::object& fn, const pybind11::object& arg);
  /// Raise what was kept, if anything.
  void rethrow();

 private:
  void stop_keeping();
  std::optional<pybind11::error_already_set> kept_;
};

}  // namespace kbsim::python
