#include "plugin/params_resolve.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "kbsim/text.hpp"
#include "kbsim/time.hpp"

namespace kbsim::core {

namespace {
bool convert(const ParamValue& in, ParamType want, ParamValue& out) {
  switch (want) {
    case ParamType::kBool:
      if (!std::holds_alternative<bool>(in)) return false;
      out = in;
      return true;
    case ParamType::kInt:
      if (std::holds_alternative<std::int64_t>(in)) {
        out = in;
        return true;
      }
      if (const auto* d = std::get_if<double>(&in);
          d && std::isfinite(*d) && std::floor(*d) == *d && std::fabs(*d) < 9.0e15) {
        out = static_cast<std::int64_t>(*d);
        return true;
      }
      return false;
    case ParamType::kFloat:
      if (const auto* i = std::get_if<std::int64_t>(&in)) {
        out = static_cast<double>(*i);
        return true;
      }
      if (std::holds_alternative<double>(in)) {
        out = in;
        return true;
      }
      return false;
    case ParamType::kString:
    case ParamType::kNode:
      if (!std::holds_alternative<std::string>(in)) return false;
      out = in;
      return true;
  }
  return false;
}
/// Times and bandwidths (by the unit in their names, docs/model.md "Links and
/// flits") must be simulatable: a time beyond 10^15 ns (11.6 days) or a
/// bandwidth so small that one byte takes longer would run past the 64-bit
/// picosecond clock, so they are refused here rather than saturated later.
void check_range(const ParamSpec& spec, const ParamValue& v, const std::string& origin, const std::string& owner) {
  const auto* d = std::get_if<double>(&v);
  if (!d) return;
  auto ends_with = [&](std::string_view unit) {
    return spec.name.size() > unit.size() && spec.name.compare(spec.name.size() - unit.size(), unit.size(), unit) == 0;
  };
  if (!std::isfinite(*d))
    throw ConfigError(origin + ": parameter '" + spec.name + "' of " + owner + " must be a finite number");
  if (ends_with("_ns") && std::fabs(*d) > kMaxTimeNs)
    throw ConfigError(origin + ": parameter '" + spec.name + "' of " + owner + " = " + format_number(*d) +
                      " ns is beyond the simulatable range (at most 1e15 ns)");
  if (ends_with("_gbs") && *d > 0 && *d < kMinBandwidthGbs)
    throw ConfigError(origin + ": parameter '" + spec.name + "' of " + owner + " = " + format_number(*d) +
                      " GB/s is too small to simulate (0 means unlimited; otherwise at least 1e-6)");
}
}  // namespace

Params resolve_params(const std::vector<ParamSpec>& specs, const std::vector<RawParam>& given, const std::string& owner,
                      const std::string& owner_origin, const std::function<std::string()>& type_note) {
  auto note = [&] { return type_note ? type_note() : std::string(); };  // (only for an error: it builds text)
  for (std::size_t i = 0; i < given.size(); ++i) {
    bool known = false;
    for (const auto& s : specs) known = known || s.name == given[i].name;
    if (!known) {
      std::vector<std::string> names;
      for (const auto& s : specs) names.push_back(s.name);
      throw ConfigError(given[i].origin + ": unknown parameter '" + given[i].name + "' for " + owner +
                        suggest(given[i].name, names) + note());
    }
    for (std::size_t j = 0; j < i; ++j)
      if (given[j].name == given[i].name)
        throw ConfigError(given[i].origin + ": parameter '" + given[i].name + "' given twice (first at " +
                          given[j].origin + ")");
  }
  std::vector<ParamEntry> entries;
  entries.reserve(specs.size());
  for (const auto& spec : specs) {
    const RawParam* raw = nullptr;
    for (const auto& g : given)
      if (g.name == spec.name) raw = &g;
    if (!raw) {
      if (spec.required)
        throw ConfigError(owner_origin + ": " + owner + " needs parameter '" + spec.name + "' (" + spec.doc + ")" +
                          note());
      entries.push_back({spec.name, spec.default_value, "default", spec.type == ParamType::kNode});
      continue;
    }
    ParamValue value;
    if (!convert(raw->value, spec.type, value))
      throw ConfigError(raw->origin + ": parameter '" + spec.name + "' of " + owner + " must be " +
                        to_string(spec.type) + ", got '" + format_value(raw->value) + "'");
    check_range(spec, value, raw->origin, owner);
    entries.push_back({spec.name, std::move(value), raw->origin, spec.type == ParamType::kNode});
  }
  return Params(std::move(entries));
}

std::vector<RawParam> parse_param_args(const std::vector<std::string>& given, const std::vector<ParamSpec>& specs) {
  std::vector<RawParam> out;
  for (const auto& kv : given) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError("--param " + kv + ": expected key=value");
    const std::string key = kv.substr(0, eq), text = kv.substr(eq + 1);
    const bool text_param = std::any_of(
        specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == key && s.type == ParamType::kString; });
    out.push_back({key, text_param ? ParamValue{text} : parse_scalar(text), "--param " + kv});
  }
  return out;
}

}  // namespace kbsim::core
