// The configuration kit: reading a YAML document with positions, so every
// error names file:line:column (or the --set override that put the value
// there). Used by the core's loaders and by topology front-ends
// (kbsim/config/frontend.hpp). Link the kbsim::config target (it brings yaml-cpp).
#pragma once

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kbsim/errors.hpp"
#include "kbsim/params.hpp"
#include "kbsim/text.hpp"

namespace kbsim::config {

/// "file:line:column: YAML syntax error: ..." for a parse failure of `name`.
inline ConfigError syntax_error(const std::string& name, const YAML::Exception& e) {
  return ConfigError(name + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                     ": YAML syntax error: " + e.msg);
}

/// A YAML document and the name errors should use for it.
class YamlSource {
 public:
  /// Parse a file; a missing file or a syntax error throws ConfigError.
  static YamlSource load(const std::filesystem::path& file) {
    std::error_code ec;
    if (std::filesystem::is_directory(file, ec)) throw ConfigError(file.string() + ": is a directory, not a file");
    std::ifstream in(file);
    if (!in) throw ConfigError(file.string() + ": cannot open file");
    try {
      return YamlSource(file.string(), YAML::Load(in));
    } catch (const YAML::Exception& e) {
      throw syntax_error(file.string(), e);
    } catch (const std::exception& e) {  // the stream itself failed (a device, a vanished file)
      throw ConfigError(file.string() + ": cannot read it (" + e.what() + ")");
    }
  }
  /// Parse YAML text; `name` stands for the file in messages. A syntax error throws ConfigError.
  static YamlSource parse(const std::string& text, const std::string& name) {
    try {
      return YamlSource(name, YAML::Load(text));
    } catch (const YAML::Exception& e) {
      throw syntax_error(name, e);
    }
  }
  YamlSource(std::string name, const YAML::Node& root) : name_(std::move(name)), root_(root) {}

  const std::string& name() const noexcept { return name_; }
  YAML::Node& root() noexcept { return root_; }
  const YAML::Node& root() const noexcept { return root_; }

  /// "file:line:column" of a node (1-based).
  std::string where(const YAML::Node& n) const {
    YAML::Mark m = n.Mark();
    if (m.is_null()) return name_;
    return name_ + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
  }

 private:
  std::string name_;
  YAML::Node root_;
};

/// Where each YAML node came from: its file position, or the --set override
/// that replaced its subtree (nodes built from an override carry no useful mark).
class Origins {
 public:
  explicit Origins(const YamlSource& src) : src_(src) {}
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
  const YamlSource& source() const noexcept { return src_; }

 private:
  const YamlSource& src_;
  std::vector<std::pair<YAML::Node, std::string>> overrides_;
};

/// Throws ConfigError at the first key of `map` not in `allowed` (with a
/// suggestion), or at a key given twice.
inline void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed, const std::string& what,
                       const std::function<std::string(const YAML::Node&)>& where) {
  std::vector<std::pair<std::string, YAML::Node>> seen;
  for (const auto& kv : map) {
    std::string key = kv.first.Scalar();
    for (const auto& [k, node] : seen)
      if (k == key)
        throw ConfigError(where(kv.first) + ": duplicate key '" + key + "' in " + what + " (first at " + where(node) +
                          ")");
    seen.emplace_back(key, kv.first);
    bool ok = false;
    for (const auto& a : allowed) ok = ok || a == key;
    if (!ok) throw ConfigError(where(kv.first) + ": unknown key '" + key + "' in " + what + suggest(key, allowed));
  }
}

/// A scalar as a typed value: quoted -> string; true/false; integer; real; else string.
inline ParamValue scalar_value(const YAML::Node& n) {
  if (n.Tag() == "!") return n.Scalar();  // quoted: always a string
  return parse_scalar(n.Scalar());
}

/// A scalar integer or real as a double; nullopt for anything else (maps, lists, text).
inline std::optional<double> scalar_number(const YAML::Node& n) {
  if (!n.IsScalar()) return std::nullopt;
  ParamValue v = scalar_value(n);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return std::nullopt;
}

}  // namespace kbsim::config
