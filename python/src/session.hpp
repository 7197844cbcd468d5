// kbsim.Session (docs/python.md, "A live system"): a `kbsim run` of the host bench "python-session" kept open on a
// thread of its own while Python drives its configured system's host runtime and distributed runtime through a
// Channel (channel.hpp), watching for Ctrl-C while it waits.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "channel.hpp"
#include "job.hpp"

namespace kbsim::python {

class Session final : public Channel {
 public:
  /// Start `kbsim run --bench python-session ARGS...` and wait until its system is built (or raise its error).
  explicit Session(std::vector<std::string> args);
  /// Not closed: the run is ended without its results (its summary not printed).
  ~Session() override;

  /// Channel::order, with the run's printed summary dropped at close (results.json has it all).
  Event order_quietly(Order order);

 protected:
  void check_signals() override { watcher_.check_signals(); }
  void rethrow_kept() override { watcher_.rethrow(); }
  /// The run has ended (or is told to): wait for its thread, and let another run start.
  void end() override;

 private:
  Watcher watcher_;  ///< what Python's signal handlers raised while it waited
  std::unique_ptr<Job> job_;
};

/// Register the host bench "python-session" with the command line (once, at import).
void add_session_bench();
/// The Session class of the _kbsim module.
void bind_session(pybind11::module_& m);

}  // namespace kbsim::python
