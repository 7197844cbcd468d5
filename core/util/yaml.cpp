#include "util/yaml.hpp"

#include <fstream>

#include "component/params_resolve.hpp"
#include "util/text.hpp"

namespace kbsim::core {

YamlSource YamlSource::load(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw ConfigError(file.string() + ": cannot open file");
  try {
    return YamlSource(file.string(), YAML::Load(in));
  } catch (const YAML::Exception& e) {
    throw ConfigError(file.string() + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                      ": YAML syntax error: " + e.msg);
  }
}

std::string YamlSource::where(const YAML::Node& n) const {
  YAML::Mark m = n.Mark();
  if (m.is_null()) return name_;
  return name_ + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed, const std::string& what,
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

std::optional<double> scalar_number(const YAML::Node& n) {
  if (!n.IsScalar()) return std::nullopt;
  ParamValue v = scalar_value(n);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return std::nullopt;
}

ParamValue scalar_value(const YAML::Node& n) {
  if (n.Tag() == "!") return n.Scalar();  // quoted: always a string
  return parse_scalar(n.Scalar());
}

}  // namespace kbsim::core
