// Host memory a run will need, checked before it is allocated: a run whose
// need is known up front (a generated graph's size, host-side tensors) and
// exceeds what the machine can give is a configuration error with the
// estimate, not a std::bad_alloc halfway through.
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "kbsim/errors.hpp"

namespace kbsim {

/// Bytes the machine can still give (MemAvailable in /proc/meminfo), or 0 when unknown.
inline std::uint64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

/// Throw ConfigError when about `bytes` are needed (for `what`, e.g. "message-mesh
/// 4096x4096: 16777216 nodes") and the machine has fewer available.
inline void require_memory(double bytes, const std::string& what) {
  const std::uint64_t have = available_memory_bytes();
  if (have == 0 || bytes <= static_cast<double>(have)) return;
  char line[160];
  std::snprintf(line, sizeof line, "needs about %.1f GB of memory; this machine has %.1f GB available", bytes / 1e9,
                static_cast<double>(have) / 1e9);
  throw ConfigError(what + " " + line);
}

}  // namespace kbsim
