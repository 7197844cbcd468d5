#include "sweep_report.hpp"

#include <cmath>
#include <cstdio>

namespace kbsim::milestone {

std::vector<std::string> word_list(const Params& p, const StringParam& param) {
  std::vector<std::string> out;
  const std::string& s = p.get(param);
  std::size_t at = 0;
  while (at <= s.size()) {
    std::size_t comma = s.find(',', at);
    if (comma == std::string::npos) comma = s.size();
    std::string item = s.substr(at, comma - at);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    p.check(!item.empty(), param, "is a comma-separated list without empty items");
    out.push_back(item);
    at = comma + 1;
  }
  return out;
}

std::vector<std::int64_t> int_list(const Params& p, const StringParam& param) {
  std::vector<std::int64_t> out;
  for (const std::string& w : word_list(p, param)) {
    char* end = nullptr;
    const long long v = std::strtoll(w.c_str(), &end, 10);
    p.check(end && *end == '\0' && v > 0, param, "is a comma-separated list of positive integers ('" + w + "' is not)");
    out.push_back(v);
  }
  return out;
}

double need(const PointResult& r, const std::string& path, const std::string& point) {
  if (const auto v = r.metrics.number(path)) return *v;
  throw BenchError("MILESTONE_INPUT", point + " has no metric '" + path + "'");
}

std::string bytes_label(double b) {
  char buf[32];
  if (b >= 1024.0 * 1024.0) {
    std::snprintf(buf, sizeof buf, "%g MB", b / (1024.0 * 1024.0));
  } else if (b >= 1024.0) {
    std::snprintf(buf, sizeof buf, "%g KB", b / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%g B", b);
  }
  return buf;
}

Folder::Folder(BenchContext& ctx, std::string title, std::string intro)
    : ctx_(ctx), title_(std::move(title)), intro_(std::move(intro)) {}

void Folder::figure(const std::string& file, const std::string& caption, std::string svg) {
  ctx_.write_file(file, std::move(svg));
  figures_.emplace_back(file, caption);
}

void Folder::table(const std::string& file, fig::Table t) {
  ctx_.write_file(file, fig::csv(t));
  tables_.push_back(std::move(t));
}

void Folder::finish() { ctx_.write_file("index.html", fig::index_html(title_, figures_, tables_, intro_)); }

std::size_t note_failures(BenchContext& ctx, const std::vector<PointResult>& results) {
  std::size_t failed = 0;
  for (const PointResult& r : results)
    if (!r.ok) {
      ++failed;
      ctx.note("FAILED " + r.error);
    }
  return failed;
}

}  // namespace kbsim::milestone
