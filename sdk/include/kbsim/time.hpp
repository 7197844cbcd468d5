// Simulated time: an integer count of picoseconds.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace kbsim {

/// Simulated time in picoseconds. Reports show nanoseconds.
using Tick = std::uint64_t;

inline constexpr Tick kPsPerNs = 1000;
inline constexpr Tick kNever = std::numeric_limits<Tick>::max();
/// The longest time a configuration may give (10^15 ns, 11.6 days): sums of
/// many of them still fit the 64-bit picosecond clock.
inline constexpr double kMaxTimeNs = 1e15;
/// The smallest non-zero bandwidth a configuration may give (1e-6 GB/s: a
/// 256-byte flit in 2.56e8 ns).
inline constexpr double kMinBandwidthGbs = 1e-6;

/// Nanoseconds (possibly fractional) to ticks, rounded to the nearest picosecond.
inline Tick ns_to_ticks(double ns) { return static_cast<Tick>(std::llround(ns * kPsPerNs)); }

/// Ticks to nanoseconds, for reports.
inline constexpr double ticks_to_ns(Tick t) { return static_cast<double>(t) / kPsPerNs; }

/// Serialization time of `bytes` at `gbs` GB/s (10^9 bytes/s = bytes per ns); 0 GB/s means unlimited.
inline Tick serialization_ticks(std::uint64_t bytes, double gbs) {
  if (gbs <= 0.0 || bytes == 0) return 0;
  return static_cast<Tick>(std::llround(static_cast<double>(bytes) * kPsPerNs / gbs));
}

}  // namespace kbsim
