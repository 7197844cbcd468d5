#include "job.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <new>
#include <optional>

#include "channel.hpp"
#include "cli/commands.hpp"
#include "cli/run_watch.hpp"
#include "kbsim/errors.hpp"
#include "kbsim/text.hpp"
#include "sim/watch.hpp"

namespace py = pybind11;

namespace kbsim::python {

namespace {

std::atomic<bool> g_busy{false};         // a job is under way
struct sigaction g_python_sigint;        // Python's own SIGINT handler, while a job runs
thread_local bool t_job_thread = false;  // this thread runs a job's command (a fork from it is a sweep's worker)

/// SIGINT while a job runs: stop the run now, as the kbsim command's handler does (the sweep's workers, which get
/// the same Ctrl-C, stop at once too: the run must know it was interrupted), then let Python's handler see it.
void on_sigint(int sig) {
  cli::RunWatch::interrupt(sig);
  if (g_python_sigint.sa_handler != SIG_DFL && g_python_sigint.sa_handler != SIG_IGN &&
      !(g_python_sigint.sa_flags & SA_SIGINFO))
    g_python_sigint.sa_handler(sig);
}

/// Put Python's SIGINT handler back, unless Python set another meanwhile (signal.signal while a session was open).
void restore_sigint() {
  struct sigaction now {};
  sigaction(SIGINT, nullptr, &now);
  if (now.sa_handler == &on_sigint) sigaction(SIGINT, &g_python_sigint, nullptr);
}

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

Job::Job(std::vector<std::string> args, bool quiet, OnStart on_start, OnEnd on_end) {
  if (g_busy.exchange(true))
    raise(static_cast<int>(ExitCode::kUsage),
          "another kbsim run is under way in this process (an open kbsim.Session?): close it first");
  args.insert(args.begin(), "kbsim");
  cli::RunWatch::reset();  // a Ctrl-C from now on stops this run, even one that comes while it starts
  sigaction(SIGINT, nullptr, &g_python_sigint);
  if (g_python_sigint.sa_handler != SIG_IGN) {  // SIGINT ignored (a background job): it stops nothing
    struct sigaction sa {};
    sa.sa_handler = &on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
  }
  struct Undo {  // the thread could not start: leave as we came
    bool armed = true;
    ~Undo() {
      if (!armed) return;
      restore_sigint();
      g_busy = false;
    }
  } undo;
  thread_ = std::thread(
      [this, words = std::move(args), quiet, on_start = std::move(on_start), on_end = std::move(on_end)]() mutable {
        t_job_thread = true;
        if (on_start) on_start();
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
  undo.armed = false;
}

Job::~Job() {
  if (thread_.joinable()) thread_.join();
  restore_sigint();
  g_busy = false;
}

int Job::wait(const py::object& progress_cb) {
  Watcher watcher;
  for (;;) {
    bool done = false;
    {
      py::gil_scoped_release unlocked;
      std::unique_lock<std::mutex> lock(m_);
      done = cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return ended_; });
    }
    watcher.check_signals();
    if (!progress_cb.is_none()) watcher.call(progress_cb, progress());
    if (done) break;
  }
  {
    py::gil_scoped_release unlocked;
    thread_.join();
  }
  watcher.rethrow();
  if (!error_.empty()) raise(code_, error_);
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

void watch_signals_in_forked_workers() {
  // A sweep's workers are forked from this process and run no Python: Python's SIGINT handler, which they would
  // inherit, only sets a flag for an interpreter that never looks. Each stops its point at the next heartbeat
  // instead, as a worker forked by the kbsim command does (a terminal's Ctrl-C reaches the whole process group).
  static const int registered = ::pthread_atfork(nullptr, nullptr, [] {
    if (!t_job_thread) return;  // a fork of the interpreter's own (multiprocessing): Python's handlers stay
    struct sigaction sa {};
    sa.sa_handler = [](int) { core::watch::request_stop(); };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
  });
  (void)registered;
}

void Watcher::check_signals() {
  if (PyErr_CheckSignals() != 0) stop_keeping();
}

void Watcher::call(const py::object& fn, const py::object& arg) {
  if (PyObject* r = PyObject_CallOneArg(fn.ptr(), arg.ptr())) {
    Py_DECREF(r);
    return;
  }
  stop_keeping();
}

void Watcher::stop_keeping() {
  cli::RunWatch::interrupt(SIGINT);  // the run stops at its next heartbeat, its results so far kept
  if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
    PyErr_Clear();  // the run ends as interrupted: kbsim.InterruptedRun says it
    return;
  }
  py::error_already_set e;  // takes the error indicator
  if (!kept_) kept_.emplace(std::move(e));
}

void Watcher::rethrow() {
  if (!kept_) return;
  py::error_already_set e = std::move(*kept_);
  kept_.reset();
  throw e;
}

}  // namespace kbsim::python
