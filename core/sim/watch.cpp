#include "sim/watch.hpp"

#include <atomic>
#include <csignal>

namespace kbsim::core::watch {

namespace {
volatile std::sig_atomic_t g_stop = 0;
Beat g_beat = nullptr;
bool g_sweeping = false;
std::atomic<Tick> g_now{0};
std::atomic<std::uint64_t> g_events{0};
std::atomic<std::size_t> g_points_done{0}, g_points_total{0};
}  // namespace

void request_stop() noexcept { g_stop = 1; }
bool stop_requested() noexcept { return g_stop != 0; }
void clear() noexcept {
  g_stop = 0;
  g_now = 0;
  g_events = 0;
  g_points_done = g_points_total = 0;
}
void set_beat(Beat b) noexcept { g_beat = b; }
void set_sweeping(bool on) noexcept { g_sweeping = on; }
bool sweeping() noexcept { return g_sweeping; }
void beat(Tick now, std::uint64_t events) {
  g_now.store(now, std::memory_order_relaxed);
  g_events.store(events, std::memory_order_relaxed);
  if (g_beat) g_beat(now, events);
}

Progress progress() noexcept {
  return {g_now.load(std::memory_order_relaxed), g_events.load(std::memory_order_relaxed),
          g_points_done.load(std::memory_order_relaxed), g_points_total.load(std::memory_order_relaxed)};
}
void set_points(std::size_t done, std::size_t total) noexcept {
  g_points_total.store(total, std::memory_order_relaxed);
  g_points_done.store(done, std::memory_order_relaxed);
}

}  // namespace kbsim::core::watch
