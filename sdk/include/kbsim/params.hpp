// Typed parameters: declared with a default and a one-line doc, read by name.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kbsim/errors.hpp"
#include "kbsim/text.hpp"

namespace kbsim {

using NodeIndex = std::uint32_t;
/// "No node": an empty node reference.
inline constexpr NodeIndex kNoNode = ~NodeIndex{0};

/// kNode: a reference to another node of the graph, given by its id and
/// resolved when the system is built (an unknown id is a configuration error
/// naming the parameter); an empty id means none.
enum class ParamType { kBool, kInt, kFloat, kString, kNode };

inline const char* to_string(ParamType t) {
  switch (t) {
    case ParamType::kBool: return "bool";
    case ParamType::kInt: return "int";
    case ParamType::kFloat: return "float";
    case ParamType::kString: return "string";
    case ParamType::kNode: return "node";
  }
  return "?";
}

using ParamValue = std::variant<bool, std::int64_t, double, std::string>;

/// The declaration of one parameter. A name that carries a unit says so in its
/// suffix (`_ns`, `_ps`, `_mm`, `_gbs`, `_bytes`, ...); see `unit_of`.
struct ParamSpec {
  std::string name;
  ParamType type = ParamType::kInt;
  ParamValue default_value{std::int64_t{0}};
  std::string doc;
  bool required = false;
};

inline ParamSpec param_int(std::string name, std::int64_t def, std::string doc) {
  return {std::move(name), ParamType::kInt, def, std::move(doc), false};
}
inline ParamSpec param_float(std::string name, double def, std::string doc) {
  return {std::move(name), ParamType::kFloat, def, std::move(doc), false};
}
inline ParamSpec param_bool(std::string name, bool def, std::string doc) {
  return {std::move(name), ParamType::kBool, def, std::move(doc), false};
}
inline ParamSpec param_string(std::string name, std::string def, std::string doc) {
  return {std::move(name), ParamType::kString, std::move(def), std::move(doc), false};
}
/// A reference to a collaborator node (its PE's MMU, its TCM...). A topology
/// front-end may fill it in; read it with Params::get_node.
inline ParamSpec param_node(std::string name, std::string def, std::string doc) {
  return {std::move(name), ParamType::kNode, std::move(def), std::move(doc), false};
}
inline ParamSpec required(ParamSpec p) {
  p.required = true;
  return p;
}

/// A parameter declared once, so that its name is written in one place: list it in an info()'s params (where it
/// becomes its ParamSpec) and read it with Params::get, which returns the handle's type. Declare handles at namespace
/// scope (`constexpr IntParam kLatency{"latency_ns", 5, "the hop's latency"};`); `.required = true` for a parameter
/// the configuration must give.
template <ParamType K, class Default>
struct ParamHandle {
  std::string_view name;
  Default def;
  std::string_view doc;
  bool required = false;
  operator ParamSpec() const {  // NOLINT(google-explicit-constructor): a handle is listed where specs are
    if constexpr (K == ParamType::kString || K == ParamType::kNode)
      return {std::string(name), K, std::string(def), std::string(doc), required};
    else
      return {std::string(name), K, def, std::string(doc), required};
  }
};
using IntParam = ParamHandle<ParamType::kInt, std::int64_t>;
using FloatParam = ParamHandle<ParamType::kFloat, double>;
using BoolParam = ParamHandle<ParamType::kBool, bool>;
using StringParam = ParamHandle<ParamType::kString, std::string_view>;
/// A reference to a collaborator node, by id (see param_node); Params::get gives the node.
using NodeParam = ParamHandle<ParamType::kNode, std::string_view>;

/// The unit a parameter or key name declares by its suffix, or "" when it has none.
inline std::string_view unit_of(std::string_view name) {
  struct Suffix {
    std::string_view suffix, unit;
  };
  static constexpr Suffix kUnits[] = {{"_ns", "ns"},         {"_ps", "ps"},       {"_us", "us"},
                                      {"_mm", "mm"},         {"_gbs", "GB/s"},    {"_bytes", "bytes"},
                                      {"_per_mm", "per mm"}, {"_pct", "percent"}, {"_ghz", "GHz"}};
  std::string_view best;
  std::string_view unit;
  for (const auto& s : kUnits) {
    if (name.size() > s.suffix.size() && name.substr(name.size() - s.suffix.size()) == s.suffix &&
        s.suffix.size() > best.size()) {
      best = s.suffix;
      unit = s.unit;
    }
  }
  return unit;
}

inline std::string format_value(const ParamValue& v) {
  struct V {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const {  // short, exact, and still a real: "2.0", "0.25", "1e300", "1e-7"
      std::string s = format_number(d);
      if (s.find_first_of(".eni") == std::string::npos) s += ".0";
      return s;
    }
    std::string operator()(const std::string& s) const { return s; }
  };
  return std::visit(V{}, v);
}

/// One resolved parameter value and where it came from (`file:line:column`,
/// `--set ...`, or `default`).
struct ParamEntry {
  std::string name;
  ParamValue value;
  std::string origin;
  bool node_ref = false;     ///< a kNode parameter: `value` is the node id
  NodeIndex node = kNoNode;  ///< its node, once the system is built
};

/// The resolved parameters of one component or bench: every declared parameter,
/// from the configuration or its default. Reading an undeclared name throws.
class Params {
 public:
  Params() = default;
  explicit Params(std::vector<ParamEntry> entries) : entries_(std::move(entries)) {}

  std::int64_t get_int(std::string_view name) const { return std::get<std::int64_t>(find(name, ParamType::kInt)); }
  double get_float(std::string_view name) const {
    const ParamValue& v = find(name, ParamType::kFloat);
    if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
    return std::get<double>(v);
  }
  bool get_bool(std::string_view name) const { return std::get<bool>(find(name, ParamType::kBool)); }
  /// The node a kNode parameter names, or kNoNode when it is empty.
  NodeIndex get_node(std::string_view name) const {
    const ParamEntry& e = entry(name);
    if (!e.node_ref) throw Error("parameter '" + std::string(name) + "' read as node but declared otherwise");
    return e.node;
  }
  const std::string& get_string(std::string_view name) const {
    return std::get<std::string>(find(name, ParamType::kString));
  }
  /// Where a parameter's value came from, for error messages.
  const std::string& origin(std::string_view name) const { return entry(name).origin; }
  /// Whether `name` is declared here.
  bool has(std::string_view name) const noexcept {
    for (const auto& e : entries_)
      if (e.name == name) return true;
    return false;
  }

  /// Throws ConfigError "origin: parameter 'name' <what>" unless `ok`.
  void check(bool ok, std::string_view name, std::string_view what) const {
    if (!ok) throw ConfigError(origin(name) + ": parameter '" + std::string(name) + "' " + std::string(what));
  }

  // By a declared handle (ParamHandle): the value in the handle's type.
  std::int64_t get(const IntParam& p) const { return get_int(p.name); }
  double get(const FloatParam& p) const { return get_float(p.name); }
  bool get(const BoolParam& p) const { return get_bool(p.name); }
  const std::string& get(const StringParam& p) const { return get_string(p.name); }
  NodeIndex get(const NodeParam& p) const { return get_node(p.name); }
  template <ParamType K, class D>
  const std::string& origin(const ParamHandle<K, D>& p) const {
    return origin(p.name);
  }
  template <ParamType K, class D>
  void check(bool ok, const ParamHandle<K, D>& p, std::string_view what) const {
    check(ok, p.name, what);
  }

  const std::vector<ParamEntry>& entries() const noexcept { return entries_; }
  std::vector<ParamEntry>& entries() noexcept { return entries_; }

 private:
  const ParamEntry& entry(std::string_view name) const {
    for (const auto& e : entries_)
      if (e.name == name) return e;
    throw Error("parameter '" + std::string(name) + "' was read but never declared");
  }
  const ParamValue& find(std::string_view name, ParamType want) const {
    const ParamEntry& e = entry(name);
    bool ok = want == ParamType::kFloat
                  ? (std::holds_alternative<double>(e.value) || std::holds_alternative<std::int64_t>(e.value))
                  : e.value.index() == static_cast<std::size_t>(want) && !e.node_ref;
    if (!ok)
      throw Error("parameter '" + std::string(name) + "' read as " + to_string(want) + " but declared otherwise");
    return e.value;
  }
  std::vector<ParamEntry> entries_;
};

/// Parse a value written as text (on the command line, in a YAML scalar):
/// true/false, an integer (decimal or 0x hex), a real number, or else a string.
inline ParamValue parse_scalar(const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  std::int64_t i = 0;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    auto [h, hec] = std::from_chars(text.data() + 2, text.data() + text.size(), i, 16);
    if (hec == std::errc() && h == text.data() + text.size()) return i;
  }
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
  if (ec == std::errc() && p == text.data() + text.size() && !text.empty()) return i;
  double d = 0;
  auto [q, ec2] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (ec2 == std::errc() && q == text.data() + text.size() && !text.empty()) return d;
  return text;
}

}  // namespace kbsim
