// The run's watch: a stop request any engine honours at its next heartbeat
// (set from a signal handler, or by a wall-time budget), and a heartbeat
// callback the command line uses to show progress. Engines beat about every
// 2^16 events, so the loop pays one mask test per event.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kbsim/time.hpp"

namespace kbsim::core::watch {

/// Ask every running engine to stop at its next heartbeat (async-signal-safe).
void request_stop() noexcept;
bool stop_requested() noexcept;
/// Forget a stop request (tests, and a process that runs twice).
void clear() noexcept;

/// Called from the engines' loops about every 2^16 events with the engine's
/// time and event count; nullptr (the default) for none.
using Beat = void (*)(Tick now, std::uint64_t events);
void set_beat(Beat beat) noexcept;
void beat(Tick now, std::uint64_t events);

/// What the last heartbeat and the running sweep said, for a program that shows progress from another thread
/// (the Python module): read at any time, from any thread.
struct Progress {
  Tick now = 0;
  std::uint64_t events = 0;
  std::size_t points_done = 0, points_total = 0;
};
Progress progress() noexcept;
/// A sweep's progress: `done` of `total` points have ended.
void set_points(std::size_t done, std::size_t total) noexcept;

/// A sweep shows its own progress (points done): the per-run progress line keeps quiet meanwhile.
void set_sweeping(bool on) noexcept;
bool sweeping() noexcept;

}  // namespace kbsim::core::watch
