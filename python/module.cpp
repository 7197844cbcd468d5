// kbsim._kbsim: the command line's own code, callable from Python (docs/python.md). The package's Python half
// (kbsim/__init__.py) builds a command line from keyword arguments and reads what the run wrote, so a run from
// Python loads its plugins, checks its input, runs and writes exactly as `kbsim` does.
#include <fcntl.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "kbsim/errors.hpp"
#include "kbsim/text.hpp"

namespace py = pybind11;

namespace {

/// The Python exception a kbsim error becomes, by exit code (kbsim/__init__.py defines the classes and hands them
/// over with _register_errors).
py::dict& error_types() {
  static py::dict* types = new py::dict();  // lives as long as the interpreter (never destroyed at exit)
  return *types;
}

[[noreturn]] void raise(int code, const std::string& message) {
  py::object type = error_types().contains(py::int_(code)) ? error_types()[py::int_(code)]
                                                           : py::reinterpret_borrow<py::object>(PyExc_RuntimeError);
  PyErr_SetObject(type.ptr(), py::make_tuple(message, code).ptr());
  throw py::error_already_set();
}

/// Standard output sent to /dev/null while it lives (the command's summary lines, for a quiet call).
class Silenced {
 public:
  Silenced() {
    std::fflush(stdout);
    saved_ = ::dup(STDOUT_FILENO);
    const int null = ::open("/dev/null", O_WRONLY);
    if (saved_ >= 0 && null >= 0) ::dup2(null, STDOUT_FILENO);
    if (null >= 0) ::close(null);
  }
  ~Silenced() {
    std::fflush(stdout);
    if (saved_ >= 0) {
      ::dup2(saved_, STDOUT_FILENO);
      ::close(saved_);
    }
  }
  Silenced(const Silenced&) = delete;
  Silenced& operator=(const Silenced&) = delete;

 private:
  int saved_ = -1;
};

/// Run `kbsim ARGS...` in this process: its exit code (0, or 8 when interrupted, or 6 when sweep points failed),
/// or the error it ended with raised as the registered exception. The interpreter's lock is released meanwhile;
/// `quiet`: what the command prints on standard output is dropped (its errors still raise).
int command_line(const std::vector<std::string>& args, bool quiet) {
  // One command at a time: it changes process-wide state (signal handlers, standard output, the run's watch).
  static std::mutex one_at_a_time;
  std::vector<std::string> words{"kbsim"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  int code = 0;
  std::string error;
  {
    py::gil_scoped_release unlocked;
    const std::lock_guard<std::mutex> lock(one_at_a_time);
    std::optional<Silenced> silenced;
    if (quiet) silenced.emplace();
    try {
      code = kbsim::cli::run_command_line(static_cast<int>(words.size()), argv.data());
    } catch (const kbsim::Error& e) {
      code = static_cast<int>(e.code());
      error = kbsim::one_line(e.what());
    } catch (const std::bad_alloc&) {
      code = static_cast<int>(kbsim::ExitCode::kConfig);
      error = "out of memory: the run needs more than this machine can give";
    } catch (const std::exception& e) {
      code = static_cast<int>(kbsim::ExitCode::kInternal);
      error = std::string("internal error: ") + kbsim::one_line(e.what());
    }
    std::fflush(stdout);
  }
  if (!error.empty()) raise(code, error);
  return code;
}

}  // namespace

PYBIND11_MODULE(_kbsim, m) {
  m.doc() = "kbsim's command line, in process (use the kbsim package, not this module)";
  kbsim::cli::set_bin_dir(KBSIM_BIN_DIR);
  if (!spdlog::get("kbsim")) {
    auto logger = spdlog::stderr_color_mt("kbsim");
    logger->set_pattern("kbsim: %l: %v");
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::warn);
  }
  m.def("command_line", &command_line, py::arg("args"), py::arg("quiet") = false,
        "Run `kbsim ARGS...` in this process; the exit code, or the error raised as kbsim.Error's subclass.");
  m.def(
      "_register_errors", [](const py::dict& types) { error_types() = types; }, py::arg("types"));
}
