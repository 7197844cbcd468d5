// Bench metrics: an ordered tree of named values, written under `metrics` in
// results.json. Insertion order is kept, so output is deterministic.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kbsim {

class Metrics {
 public:
  using Scalar = std::variant<bool, std::int64_t, std::uint64_t, double, std::string>;
  struct Entry {
    std::string key;  ///< empty for list items
    Scalar scalar;
    std::unique_ptr<Metrics> node;  ///< set for objects and lists
  };

  explicit Metrics(bool is_list = false) : is_list_(is_list) {}

  /// Set (or replace) a scalar.
  void set(const std::string& key, Scalar value) {
    for (auto& e : entries_)
      if (e.key == key && !e.node) {
        e.scalar = std::move(value);
        return;
      }
    entries_.push_back({key, std::move(value), nullptr});
  }
  /// A nested object under `key` (created on first use).
  Metrics& object(const std::string& key) { return nested(key, false); }
  /// A list under `key` (created on first use).
  Metrics& list(const std::string& key) { return nested(key, true); }
  /// Append a new object to this list.
  Metrics& append() {
    entries_.push_back({"", Scalar{false}, std::make_unique<Metrics>(false)});
    return *entries_.back().node;
  }
  /// Append a new list to this list.
  Metrics& append_list() {
    entries_.push_back({"", Scalar{false}, std::make_unique<Metrics>(true)});
    return *entries_.back().node;
  }
  /// Append a scalar to this list.
  void append(Scalar value) { entries_.push_back({"", std::move(value), nullptr}); }

  bool is_list() const noexcept { return is_list_; }
  const std::vector<Entry>& entries() const noexcept { return entries_; }
  const Entry* find(const std::string& key) const {
    for (const auto& e : entries_)
      if (e.key == key) return &e;
    return nullptr;
  }

  /// The number at a dotted path ("cases.h2d.latency_ns"; list items by
  /// index; a bool is 1 or 0), or nullopt when there is none or it is not a number.
  std::optional<double> number(std::string_view path) const {
    const Metrics* at = this;
    while (true) {
      const std::size_t dot = path.find('.');
      const std::string key(path.substr(0, dot));
      const Entry* e = nullptr;
      if (at->is_list_) {
        std::size_t i = 0;
        for (char c : key) i = c >= '0' && c <= '9' ? i * 10 + static_cast<std::size_t>(c - '0') : ~std::size_t{0};
        if (!key.empty() && i < at->entries_.size()) e = &at->entries_[i];
      } else {
        e = at->find(key);
      }
      if (!e) return std::nullopt;
      if (dot == std::string_view::npos) {
        if (e->node) return std::nullopt;
        if (const auto* d = std::get_if<double>(&e->scalar)) return *d;
        if (const auto* u = std::get_if<std::uint64_t>(&e->scalar)) return static_cast<double>(*u);
        if (const auto* s = std::get_if<std::int64_t>(&e->scalar)) return static_cast<double>(*s);
        if (const auto* b = std::get_if<bool>(&e->scalar)) return *b ? 1.0 : 0.0;
        return std::nullopt;
      }
      if (!e->node) return std::nullopt;
      at = e->node.get();
      path.remove_prefix(dot + 1);
    }
  }

 private:
  Metrics& nested(const std::string& key, bool list) {
    for (auto& e : entries_)
      if (e.key == key && e.node) return *e.node;
    entries_.push_back({key, Scalar{false}, std::make_unique<Metrics>(list)});
    return *entries_.back().node;
  }
  bool is_list_;
  std::vector<Entry> entries_;
};

}  // namespace kbsim
