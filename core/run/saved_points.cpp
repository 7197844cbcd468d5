#include "run/saved_points.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "kbsim/errors.hpp"
#include "kbsim/text.hpp"

namespace kbsim::core {

namespace {

using Value = rapidjson::Value;

rapidjson::Document read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw ConfigError(file.string() + ": cannot read it (--replot needs the folder a sweep wrote)");
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document d;
  d.Parse<rapidjson::kParseFullPrecisionFlag>(text.str().c_str());
  if (d.HasParseError())
    throw ConfigError(file.string() + ": not JSON (offset " + std::to_string(d.GetErrorOffset()) +
                      "): " + rapidjson::GetParseError_En(d.GetParseError()));
  return d;
}

/// A JSON value as metrics: objects and arrays keep their order; null (a number that was not finite) is NaN.
void to_metrics(const Value& v, Metrics& into);

Metrics::Scalar scalar(const Value& v) {
  if (v.IsBool()) return v.GetBool();
  if (v.IsString()) return std::string(v.GetString(), v.GetStringLength());
  if (v.IsInt64()) return v.GetInt64();
  if (v.IsUint64()) return v.GetUint64();
  if (v.IsDouble()) return v.GetDouble();
  return std::nan("");
}

void to_metrics(const Value& v, Metrics& into) {
  if (v.IsArray()) {
    for (const Value& e : v.GetArray()) {
      if (e.IsObject()) {
        to_metrics(e, into.append());
      } else if (e.IsArray()) {
        to_metrics(e, into.append_list());
      } else {
        into.append(scalar(e));
      }
    }
    return;
  }
  for (const auto& m : v.GetObject()) {
    const std::string key(m.name.GetString(), m.name.GetStringLength());
    if (m.value.IsObject()) {
      to_metrics(m.value, into.object(key));
    } else if (m.value.IsArray()) {
      to_metrics(m.value, into.list(key));
    } else {
      into.set(key, scalar(m.value));
    }
  }
}

std::vector<std::string> strings(const Value& v) {
  std::vector<std::string> out;
  if (v.IsArray())
    for (const Value& e : v.GetArray())
      if (e.IsString()) out.emplace_back(e.GetString());
  return out;
}

std::string listed(const std::vector<std::string>& v) { return v.empty() ? "none" : join(v, " "); }

/// `v`'s member `key`, of a kind `is` accepts; ConfigError naming the file and `where` otherwise.
const Value& member(const Value& v, const char* key, bool (Value::*is)() const, const std::filesystem::path& file,
                    const std::string& where) {
  if (!v.IsObject() || !v.HasMember(key) || !(v[key].*is)())
    throw ConfigError(file.string() + ": " + where + " has no valid '" + key + "' (was it written by kbsim?)");
  return v[key];
}

}  // namespace

std::vector<PointRecord> saved_points(const std::filesystem::path& dir, const std::string& bench,
                                      const std::vector<std::string>& overrides,
                                      const std::vector<SweepPoint>& points) {
  const std::filesystem::path results_file = dir / "results.json", points_file = dir / "points.json";
  const rapidjson::Document results = read_json(results_file);
  const std::string was = member(results, "bench", &Value::IsString, results_file, "it").GetString();
  if (was != bench) throw ConfigError(results_file.string() + ": a run of bench '" + was + "', not of '" + bench + "'");
  const Value& topology = member(results, "topology", &Value::IsObject, results_file, "it");
  const std::vector<std::string> set =
      strings(member(topology, "overrides", &Value::IsArray, results_file, "topology"));
  if (set != overrides)
    throw ConfigError(results_file.string() + ": it ran with --set " + listed(set) + ", this run with " +
                      listed(overrides) + ": replot with the same settings");
  const rapidjson::Document saved = read_json(points_file);
  if (!saved.IsObject() || !saved.HasMember("points") || !saved["points"].IsArray())
    throw ConfigError(points_file.string() + ": no list of points");
  const Value& list = saved["points"];
  if (list.Size() != points.size())
    throw ConfigError(points_file.string() + ": holds " + std::to_string(list.Size()) + " points, this sweep has " +
                      std::to_string(points.size()) + " (were its parameters different?)");
  std::vector<PointRecord> out(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Value& p = list[static_cast<rapidjson::SizeType>(i)];
    const std::string where = "point " + std::to_string(i + 1);
    const Value& config = member(p, "config", &Value::IsObject, points_file, where);
    const std::string bench_was = member(config, "bench", &Value::IsString, points_file, where).GetString();
    const std::vector<std::string> params = strings(member(config, "params", &Value::IsArray, points_file, where));
    const SweepPoint& want = points[i];
    if (bench_was != want.bench || params != want.params ||
        strings(member(config, "set", &Value::IsArray, points_file, where)) != want.overrides)
      throw ConfigError(points_file.string() + ": " + where + " is " + bench_was + " " + listed(params) +
                        ", this sweep's is " + want.bench + " " + listed(want.params) +
                        " (were its parameters different?)");
    PointRecord& r = out[i];
    to_metrics(config, r.config);
    r.result.ok = member(p, "ok", &Value::IsBool, points_file, where).GetBool();
    if (!r.result.ok) r.result.error = member(p, "error", &Value::IsString, points_file, where).GetString();
    to_metrics(member(p, "metrics", &Value::IsObject, points_file, where), r.result.metrics);
    r.sim_time = ns_to_ticks(member(p, "sim_time_ns", &Value::IsNumber, points_file, where).GetDouble());
    r.events = member(p, "events", &Value::IsUint64, points_file, where).GetUint64();
  }
  return out;
}

}  // namespace kbsim::core
