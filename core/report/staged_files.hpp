// Output files written all or nothing: each goes to a temporary name beside
// its final one; commit() renames them all into place, and files not
// committed (an error on the way) are removed when the set goes.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kbsim/json/json.hpp"

namespace kbsim::core {

class StagedFiles {
 public:
  StagedFiles() = default;
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;
  ~StagedFiles();

  void json(const std::filesystem::path& file, const std::function<void(json::JsonWriter&)>& body);
  void text(const std::filesystem::path& file, const std::string& content);
  /// Rename every file into place; Error naming the first that cannot be (the rest are removed).
  void commit();

 private:
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> staged_;  ///< temporary -> final
};

}  // namespace kbsim::core
