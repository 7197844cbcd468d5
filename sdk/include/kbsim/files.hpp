// Files a run writes: temporary names that concurrent runs never share.
#pragma once

#include <unistd.h>

#include <atomic>
#include <string>
#include <string_view>

namespace kbsim {

/// A temporary name beside `file`, unique to this process and call
/// ("<file>.tmp.<pid>.<n>"): write there, then rename into place.
inline std::string temp_name(std::string_view file) {
  static std::atomic<unsigned> counter{0};
  return std::string(file) + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

}  // namespace kbsim
