// Where each YAML node came from: the file position, or the --set override
// that replaced its subtree (nodes built from an override carry no useful mark).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "util/yaml.hpp"

namespace kbsim::core {

/// Tracks which subtrees came from --set, so errors name the override.
class Origins {
 public:
  explicit Origins(YamlSource& src) : src_(src) {}
  void add_override(const YAML::Node& n, std::string text) { overrides_.emplace_back(n, std::move(text)); }
  std::string where(const YAML::Node& n, const std::string& inherited = {}) const {
    for (const auto& [node, text] : overrides_)
      if (node.is(n)) return text;
    return inherited.empty() ? src_.where(n) : inherited;
  }
  /// The override label for `n` if it is an override root, else `inherited`.
  std::string scope(const YAML::Node& n, const std::string& inherited) const {
    for (const auto& [node, text] : overrides_)
      if (node.is(n)) return text;
    return inherited;
  }

 private:
  YamlSource& src_;
  std::vector<std::pair<YAML::Node, std::string>> overrides_;
};

}  // namespace kbsim::core
