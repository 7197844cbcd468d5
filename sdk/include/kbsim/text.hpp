// Small text helpers for messages and reports: "did you mean" suggestions,
// lists, nanoseconds without trailing zeros.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace kbsim {

inline std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

namespace detail {
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}
}  // namespace detail

/// Up to `max` candidates closest to `word` by edit distance (closest first,
/// ties in input order), only those within a plausible distance.
inline std::vector<std::string> closest(std::string_view word, const std::vector<std::string>& candidates,
                                        std::size_t max = 3) {
  std::vector<std::pair<std::size_t, std::size_t>> scored;  // (distance, position)
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    std::size_t d = detail::edit_distance(word, candidates[i]);
    bool contains = !word.empty() && (candidates[i].find(word) != std::string::npos ||
                                      word.find(candidates[i]) != std::string_view::npos);
    std::size_t limit = std::max<std::size_t>(2, std::max(word.size(), candidates[i].size()) / 2);
    if (d <= limit || contains) scored.emplace_back(contains ? std::min<std::size_t>(d, 1) : d, i);
  }
  std::stable_sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (std::size_t k = 0; k < scored.size() && out.size() < max; ++k) out.push_back(candidates[scored[k].second]);
  return out;
}

/// " (closest: a, b)" or " (known: a, b, c)" when nothing is close; "" when there are no candidates.
inline std::string suggest(std::string_view word, const std::vector<std::string>& candidates) {
  if (candidates.empty()) return "";
  auto near = closest(word, candidates);
  if (!near.empty()) return " (closest: " + join(near) + ")";
  if (candidates.size() <= 8) return " (known: " + join(candidates) + ")";
  return "";
}

inline std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

/// A message as exactly one line of printable text: a newline shows as "\n",
/// any other control byte as "\xNN" (errors are one line, whatever a user named).
inline std::string one_line(std::string_view what) {
  std::string out;
  for (const char ch : what) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    } else {
      out += ch;
    }
  }
  return out;
}

/// A number as short as it reads back exactly, as a user would write it: "1e300", "1e-300", "0.25", "1536"
/// (never a 60-digit integer or "0.000000").
inline std::string format_number(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  if (ec != std::errc()) return "?";
  std::string s(buf, end);
  if (auto e = s.find('e'); e != std::string::npos) {  // "1e+300" -> "1e300", "1e-07" -> "1e-7"
    std::size_t digits = e + 1;
    if (digits < s.size() && s[digits] == '+') s.erase(digits, 1);
    if (digits < s.size() && s[digits] == '-') ++digits;
    while (digits + 1 < s.size() && s[digits] == '0') s.erase(digits, 1);
  }
  return s;
}

/// A number of nanoseconds printed without trailing zeros ("545", "1.25"); past the simulatable range (1e15 ns),
/// or not finite, in the short form of format_number.
inline std::string format_ns(double ns) {
  if (!(ns > -1e15 && ns < 1e15)) return format_number(ns);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", ns);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

}  // namespace kbsim
