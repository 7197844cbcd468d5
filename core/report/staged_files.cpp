#include "report/staged_files.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "kbsim/errors.hpp"
#include "kbsim/files.hpp"

namespace kbsim::core {

StagedFiles::~StagedFiles() {
  std::error_code ec;
  for (const auto& [tmp, final] : staged_) std::filesystem::remove(tmp, ec);
}

void StagedFiles::json(const std::filesystem::path& file, const std::function<void(json::JsonWriter&)>& body) {
  staged_.emplace_back(json::write_json_temp(file, body), file);
}

void StagedFiles::text(const std::filesystem::path& file, const std::string& content) {
  const std::filesystem::path tmp = temp_name(file.string());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error(file.string() + ": cannot write (" + std::strerror(errno) + ")");
  const bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  if (std::fclose(f) != 0 || !ok) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw Error(file.string() + ": write failed");
  }
  staged_.emplace_back(tmp, file);
}

void StagedFiles::commit() {
  for (std::size_t k = 0; k < staged_.size(); ++k) {
    std::error_code ec;
    std::filesystem::rename(staged_[k].first, staged_[k].second, ec);
    if (ec) {  // the destructor removes what was not renamed yet
      const std::string why = staged_[k].second.string() + ": cannot write (" + ec.message() + ")";
      staged_.erase(staged_.begin(), staged_.begin() + static_cast<std::ptrdiff_t>(k));
      throw Error(why);
    }
  }
  staged_.clear();
}

}  // namespace kbsim::core
