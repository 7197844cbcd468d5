#include "sim/watch.hpp"

#include <csignal>

namespace kbsim::core::watch {

namespace {
volatile std::sig_atomic_t g_stop = 0;
Beat g_beat = nullptr;
bool g_sweeping = false;
}  // namespace

void request_stop() noexcept { g_stop = 1; }
bool stop_requested() noexcept { return g_stop != 0; }
void clear() noexcept { g_stop = 0; }
void set_beat(Beat b) noexcept { g_beat = b; }
void set_sweeping(bool on) noexcept { g_sweeping = on; }
bool sweeping() noexcept { return g_sweeping; }
void beat(Tick now, std::uint64_t events) {
  if (g_beat) g_beat(now, events);
}

}  // namespace kbsim::core::watch
