// kbsim._kbsim: the command line's own code, callable from Python (docs/python.md). The package's Python half
// (kbsim/__init__.py) builds a command line from keyword arguments and reads what the run wrote, so a run from
// Python loads its plugins, checks its input, runs and writes exactly as `kbsim` does; a kbsim.Session keeps one
// such run open and drives its system's host runtime (session.hpp).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <string>
#include <vector>

#include "block.hpp"
#include "cli/common.hpp"
#include "cli/run_watch.hpp"
#include "harness.hpp"
#include "job.hpp"
#include "session.hpp"

namespace py = pybind11;

namespace {

/// Run `kbsim ARGS...` in this process: its exit code (0, or 8 when interrupted, or 6 when sweep points failed),
/// or the error it ended with raised as the registered exception. The interpreter's lock is released meanwhile;
/// `quiet`: what the command prints on standard output is dropped (its errors still raise); `progress`: called
/// about every 100 ms with the run's progress (kbsim._progress).
int command_line(const std::vector<std::string>& args, bool quiet, const py::object& progress) {
  kbsim::python::Job job(args, quiet);
  return job.wait(progress);
}

}  // namespace

PYBIND11_MODULE(_kbsim, m) {
  m.doc() = "kbsim's command line, in process (use the kbsim package, not this module)";
  if (!spdlog::get("kbsim")) {
    auto logger = spdlog::stderr_color_mt("kbsim");
    logger->set_pattern("kbsim: %l: %v");
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::warn);
  }
  // Python keeps its own Ctrl-C: a job watches for it from the interpreter's thread (job.hpp).
  kbsim::cli::RunWatch::handle_signals(false);
  kbsim::python::watch_signals_in_forked_workers();
  kbsim::python::add_session_bench();
  m.def(
      "set_bin_dir", [](const std::string& dir) { kbsim::cli::set_bin_dir(dir); }, py::arg("dir"),
      "Where the kbsim this package stands for is installed: its bin directory (plugins and default files).");
  m.def("command_line", &command_line, py::arg("args"), py::arg("quiet") = false, py::arg("progress") = py::none(),
        "Run `kbsim ARGS...` in this process; the exit code, or the error raised as kbsim.Error's subclass.");
  kbsim::python::bind_calls(m);
  kbsim::python::bind_session(m);
  kbsim::python::bind_blocks(m);
  kbsim::python::bind_harness(m);
}
