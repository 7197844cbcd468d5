// A kbsim command line run on a thread of its own (docs/python.md), so that the interpreter's thread stays free to
// watch it: Python's Ctrl-C stops the run at its next heartbeat, and a progress display reads how far it got. One
// job at a time per process: a run changes process-wide state (the run's watch, standard output, crash reports).
#pragma once

#include <pybind11/pybind11.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kbsim::python {

/// Raise the Python exception kbsim's exit code `code` maps to (kbsim.Error's subclasses), with `message`.
[[noreturn]] void raise(int code, const std::string& message);
/// Hand over the exit code -> exception class table (kbsim/_errors.py).
void register_errors(const pybind11::dict& types);

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
  /// Called on the job's thread when the command has ended, with its exit code and error (empty when none).
  using OnEnd = std::function<void(int code, const std::string& error)>;
  /// Start `kbsim ARGS...`; `quiet`: what it prints on standard output is dropped. Raises kbsim.Error if another
  /// job (a run, a sweep or an open kbsim.Session) is under way in this process.
  Job(std::vector<std::string> args, bool quiet, OnEnd on_end = {});
  ~Job();  // waits for the command to end
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  /// Wait until the command ends, watching it from the interpreter's thread: Python's signal handlers run every
  /// 100 ms (a KeyboardInterrupt stops the run as Ctrl-C stops `kbsim run`), and `progress` (if not None) is called
  /// with the run's progress. Returns the exit code, or raises the error it ended with.
  int wait(const pybind11::object& progress);
  /// Whether the command has ended (no waiting).
  bool ended();
  /// The exit code and error, once ended.
  int code() const noexcept { return code_; }
  const std::string& error() const noexcept { return error_; }
  /// Raise the command's error if it ended with one.
  void rethrow() const;

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
/// Make the processes a sweep forks from this one stop their point at SIGINT or SIGTERM (once, at import).
void watch_signals_in_forked_workers();
/// Run the interpreter's signal handlers; a KeyboardInterrupt stops the running job (once) and is kept for later.
void check_signals();

}  // namespace kbsim::python
