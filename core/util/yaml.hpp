// Reading YAML with positions: every error names file:line:column.
#pragma once

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kbsim/params.hpp"

namespace kbsim::core {

/// A YAML document and the name errors should use for it.
class YamlSource {
 public:
  /// Parse a file; a missing file or a syntax error throws ConfigError.
  static YamlSource load(const std::filesystem::path& file);
  YamlSource(std::string name, YAML::Node root) : name_(std::move(name)), root_(std::move(root)) {}

  const std::string& name() const noexcept { return name_; }
  YAML::Node& root() noexcept { return root_; }

  /// "file:line:column" of a node (1-based).
  std::string where(const YAML::Node& n) const;

 private:
  std::string name_;
  YAML::Node root_;
};

/// Throws ConfigError at the first key of `map` not in `allowed` (with a suggestion).
void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed, const std::string& what,
                const std::function<std::string(const YAML::Node&)>& where);

/// A scalar as a typed value: quoted -> string; true/false; integer; real; else string.
ParamValue scalar_value(const YAML::Node& n);

/// A scalar integer or real as a double; nullopt for anything else (maps, lists, text).
std::optional<double> scalar_number(const YAML::Node& n);

}  // namespace kbsim::core
