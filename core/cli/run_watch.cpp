#include "cli/run_watch.hpp"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>

#include "kbsim/text.hpp"
#include "sim/watch.hpp"

namespace kbsim::cli {

namespace {
using Clock = std::chrono::steady_clock;
volatile std::sig_atomic_t g_signal = 0;  // the signal that stopped the run
bool g_budget_hit = false;
double g_max_wall = 0;
Clock::time_point g_start, g_last_print;
bool g_tty = false, g_printed = false, g_handlers = true;
struct sigaction g_old_int, g_old_term;

void on_signal(int sig) {
  if (g_signal != 0) {  // a second one: stop now, the default way
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  g_signal = sig;
  core::watch::request_stop();
}

void beat(Tick now, std::uint64_t events) {
  const auto t = Clock::now();
  const double wall = std::chrono::duration<double>(t - g_start).count();
  if (g_max_wall > 0 && wall >= g_max_wall && !g_budget_hit) {
    g_budget_hit = true;
    core::watch::request_stop();
  }
  if (!g_tty || core::watch::sweeping() || wall < 2.0 || std::chrono::duration<double>(t - g_last_print).count() < 1.0)
    return;
  g_last_print = t;
  g_printed = true;
  std::fprintf(stderr, "\r  running: sim time %s ns, %llu events, %.1f s wall (Ctrl-C stops and keeps the results)  ",
               format_ns(ticks_to_ns(now)).c_str(), static_cast<unsigned long long>(events), wall);
  std::fflush(stderr);
}
}  // namespace

RunWatch::RunWatch(double max_wall_s) {
  g_budget_hit = false;
  g_max_wall = max_wall_s;
  g_start = g_last_print = Clock::now();
  g_tty = ::isatty(STDERR_FILENO) != 0;
  g_printed = false;
  core::watch::clear();
  if (g_signal != 0) core::watch::request_stop();  // came while the run was starting: it stops at once
  core::watch::set_beat(&beat);
  if (!g_handlers) return;
  struct sigaction sa {};
  sa.sa_handler = &on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

RunWatch::~RunWatch() {
  if (g_handlers) {
    sigaction(SIGINT, &g_old_int, nullptr);
    sigaction(SIGTERM, &g_old_term, nullptr);
  }
  core::watch::set_beat(nullptr);
  if (g_printed) std::fprintf(stderr, "\r%100s\r", "");  // clear the progress line
}

void RunWatch::handle_signals(bool on) noexcept { g_handlers = on; }

void RunWatch::reset() noexcept { g_signal = 0; }

void RunWatch::interrupt(int sig) noexcept {
  if (g_signal != 0) return;
  g_signal = sig;
  core::watch::request_stop();
}

const char* RunWatch::reason() noexcept {
  if (g_signal == SIGINT) return "SIGINT";
  if (g_signal == SIGTERM) return "SIGTERM";
  if (g_budget_hit) return "--max-wall";
  return "";
}

}  // namespace kbsim::cli
