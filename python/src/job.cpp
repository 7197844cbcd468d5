#include "job.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <new>
#include <optional>

#include "cli/commands.hpp"
#include "cli/run_watch.hpp"
#include "kbsim/errors.hpp"
#include "kbsim/text.hpp"
#include "sim/watch.hpp"

namespace py = pybind11;

namespace kbsim::python {

namespace {

py::dict& error_types() {
  static py::dict* types = new py::dict();  // lives as long as the interpreter (never destroyed at exit)
  return *types;
}

std::atomic<bool> g_busy{false};  // a job is under way

}  // namespace

Silenced::Silenced() {
  std::fflush(stdout);
  saved_ = ::dup(STDOUT_FILENO);
  const int null = ::open("/dev/null", O_WRONLY);
  if (saved_ >= 0 && null >= 0) ::dup2(null, STDOUT_FILENO);
  if (null >= 0) ::close(null);
}

Silenced::~Silenced() {
  std::fflush(stdout);
  if (saved_ >= 0) {
    ::dup2(saved_, STDOUT_FILENO);
    ::close(saved_);
  }
}

void raise(int code, const std::string& message) {
  py::object type = error_types().contains(py::int_(code)) ? error_types()[py::int_(code)]
                                                           : py::reinterpret_borrow<py::object>(PyExc_RuntimeError);
  PyErr_SetObject(type.ptr(), py::make_tuple(message, code).ptr());
  throw py::error_already_set();
}

void register_errors(const py::dict& types) { error_types() = types; }

Job::Job(std::vector<std::string> args, bool quiet, OnEnd on_end) {
  if (g_busy.exchange(true))
    raise(static_cast<int>(ExitCode::kUsage),
          "another kbsim run is under way in this process (an open kbsim.Session?): close it first");
  args.insert(args.begin(), "kbsim");
  thread_ = std::thread([this, words = std::move(args), quiet, on_end = std::move(on_end)]() mutable {
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    int code = 0;
    std::string error;
    {
      std::optional<Silenced> silenced;
      if (quiet) silenced.emplace();
      try {
        code = cli::run_command_line(static_cast<int>(words.size()), argv.data());
      } catch (const Error& e) {
        code = static_cast<int>(e.code());
        error = one_line(e.what());
      } catch (const std::bad_alloc&) {
        code = static_cast<int>(ExitCode::kConfig);
        error = "out of memory: the run needs more than this machine can give";
      } catch (const std::exception& e) {
        code = static_cast<int>(ExitCode::kInternal);
        error = std::string("internal error: ") + one_line(e.what());
      }
      std::fflush(stdout);
    }
    if (on_end) on_end(code, error);
    const std::lock_guard<std::mutex> lock(m_);
    code_ = code;
    error_ = std::move(error);
    ended_ = true;
    cv_.notify_all();
  });
}

Job::~Job() {
  if (thread_.joinable()) thread_.join();
  g_busy = false;
}

bool Job::ended() {
  const std::lock_guard<std::mutex> lock(m_);
  return ended_;
}

void Job::rethrow() const {
  if (!error_.empty()) raise(code_, error_);
}

int Job::wait(const py::object& progress_cb) {
  for (;;) {
    bool done = false;
    {
      py::gil_scoped_release unlocked;
      std::unique_lock<std::mutex> lock(m_);
      done = cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return ended_; });
    }
    check_signals();
    if (!progress_cb.is_none()) progress_cb(progress());
    if (done) break;
  }
  thread_.join();
  rethrow();
  return code_;
}

py::dict progress() {
  const core::watch::Progress p = core::watch::progress();
  py::dict d;
  d["sim_time_ns"] = ticks_to_ns(p.now);
  d["events"] = p.events;
  d["points_done"] = p.points_done;
  d["points_total"] = p.points_total;
  return d;
}

void check_signals() {
  if (PyErr_CheckSignals() == 0) return;
  PyErr_Clear();  // the run ends as interrupted, and kbsim.InterruptedRun (a KeyboardInterrupt) is raised then
  cli::RunWatch::interrupt(SIGINT);
}

}  // namespace kbsim::python
