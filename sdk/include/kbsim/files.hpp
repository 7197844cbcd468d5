// Files a run writes: temporary names that concurrent runs never share.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <string_view>

#include "kbsim/errors.hpp"

namespace kbsim {

/// A temporary name beside `file`, unique to this process and call
/// ("<file>.tmp.<pid>.<n>"): write there, then rename into place.
inline std::string temp_name(std::string_view file) {
  static std::atomic<unsigned> counter{0};
  return std::string(file) + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

/// Refuse, before simulating, an output file the run could not write: UsageError "OPTION PATH: why" when `path` is
/// a directory, or its folder is missing or not writable. An empty path is no output.
inline void check_output_file(std::string_view option, const std::filesystem::path& path) {
  if (path.empty()) return;
  std::error_code ec;
  auto refuse = [&](const std::string& why) {
    throw UsageError(std::string(option) + " " + path.string() + ": " + why);
  };
  if (std::filesystem::is_directory(path, ec)) refuse("is a directory; give a file name");
  const std::filesystem::path parent = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(parent, ec)) refuse("its folder " + parent.string() + " does not exist");
  if (::access(parent.c_str(), W_OK | X_OK) != 0) refuse("its folder " + parent.string() + " is not writable");
}

}  // namespace kbsim
