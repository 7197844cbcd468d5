// Error types. The library throws them; only the command line decides exit codes.
#pragma once

#include <stdexcept>
#include <string>

namespace kbsim {

/// Documented process exit codes of the `kbsim` command.
enum class ExitCode : int {
  kOk = 0,
  kInternal = 1,     ///< a bug: an unexpected exception
  kUsage = 2,        ///< bad command line
  kConfig = 3,       ///< bad topology, components.yaml, parameter or override
  kPlugin = 4,       ///< a plugin library could not be found, loaded or registered
  kSim = 5,          ///< the simulation failed (bad address, stuck run, component fault)
  kBench = 6,        ///< a bench ran but failed its own contract or checks
  kCrash = 7,        ///< a fatal signal (SIGSEGV, SIGBUS, ...) inside the run: the component is named
  kInterrupted = 8,  ///< stopped by Ctrl-C, SIGTERM or --max-wall; the results so far are written, marked interrupted
};

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  virtual ExitCode code() const noexcept { return ExitCode::kInternal; }
};

class UsageError : public Error {
 public:
  using Error::Error;
  ExitCode code() const noexcept override { return ExitCode::kUsage; }
};

/// A configuration error. The message starts with `file:line:column:` when the place is known.
class ConfigError : public Error {
 public:
  using Error::Error;
  ExitCode code() const noexcept override { return ExitCode::kConfig; }
};

class PluginError : public Error {
 public:
  using Error::Error;
  ExitCode code() const noexcept override { return ExitCode::kPlugin; }
};

/// A simulation error. The message names the sim time and the component.
class SimError : public Error {
 public:
  using Error::Error;
  ExitCode code() const noexcept override { return ExitCode::kSim; }
};

/// A bench failed its contract; `reason` is a short machine-readable code such as NO_REQUESTS.
class BenchError : public Error {
 public:
  BenchError(std::string reason, const std::string& what) : Error(reason + ": " + what), reason_(std::move(reason)) {}
  ExitCode code() const noexcept override { return ExitCode::kBench; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string reason_;
};

}  // namespace kbsim
