#include "topology/ccl_config.hpp"

#include "kbsim/config/yaml.hpp"
#include "kbsim/plugin.hpp"
#include "kbsim/text.hpp"
#include "plugin/params_resolve.hpp"
#include "plugin/registry.hpp"
#include "topology/topology.hpp"

namespace kbsim::core {

namespace {

using config::Origins;
using config::YamlSource;

/// The given keys of one section as raw parameters, each named by its place.
std::vector<RawParam> raw(const YAML::Node& map, const Origins& o, const std::string& what) {
  std::vector<RawParam> out;
  if (!map) return out;
  if (!map.IsMap()) throw ConfigError(o.where(map) + ": " + what + " must be a map of key: value");
  for (const auto& kv : map) {
    if (!kv.second.IsScalar())
      throw ConfigError(o.where(kv.second) + ": " + what + "." + kv.first.Scalar() + " must be a single value");
    out.push_back({kv.first.Scalar(), config::scalar_value(kv.second), o.where(kv.second)});
  }
  return out;
}

CclConfig build(YamlSource& src, const std::vector<std::string>& overrides, const Registry& registry) {
  if (src.root().IsNull()) src.root() = YAML::Node(YAML::NodeType::Map);
  Origins origins(src);
  const YAML::Node& root = src.root();
  auto where = [&](const YAML::Node& n) { return origins.where(n); };
  if (!root.IsMap()) throw ConfigError(src.name() + ": a CCL configuration is a map with 'defaults' and 'algorithms'");
  if (!root["defaults"]) src.root()["defaults"] = YAML::Node(YAML::NodeType::Map);
  if (!root["algorithms"]) src.root()["algorithms"] = YAML::Node(YAML::NodeType::Map);
  if (root["algorithms"].IsMap())  // so that --set ccl.ALGORITHM.KEY=VALUE finds an entry to set
    for (const auto& [name, entry] : registry.ccl())
      if (!root["algorithms"][name]) src.root()["algorithms"][name] = YAML::Node(YAML::NodeType::Map);
  for (const std::string& typed : overrides) {  // "ccl.KEY=VALUE" as typed: applied at its place in the document
    const std::string rest = typed.substr(4);
    const bool section = rest.rfind("defaults.", 0) == 0 || rest.rfind("algorithms.", 0) == 0;
    const auto eq = rest.find('='), dot = rest.find('.');
    const bool algorithm_key = dot != std::string::npos && dot < eq;  // ccl.ALGORITHM.KEY=VALUE
    apply_override(src, origins, section ? rest : (algorithm_key ? "algorithms." : "defaults.") + rest,
                   "--set " + typed);
  }
  config::check_keys(root, {"defaults", "algorithms"}, "the CCL configuration", where);

  const std::vector<ParamSpec> defaults = ccl_default_params();
  const std::vector<RawParam> given = raw(root["defaults"], origins, "defaults");
  CclConfig out;
  out.source = src.name();
  out.algorithm = resolve_params(defaults, given, src.name() + " defaults", src.name()).get(ccl_param::kAlgorithm);

  const YAML::Node& algos = root["algorithms"];
  if (!algos.IsMap()) throw ConfigError(where(algos) + ": algorithms must be a map of algorithm name: parameters");
  std::vector<std::string> known;
  for (const auto& [name, entry] : registry.ccl()) known.push_back(name);
  for (const auto& kv : algos)
    if (!registry.ccl().count(kv.first.Scalar()))
      throw ConfigError(where(kv.first) + ": no CCL algorithm named '" + kv.first.Scalar() + "' is registered" +
                        suggest(kv.first.Scalar(), known) + " (kbsim list ccl)");
  for (const auto& [name, entry] : registry.ccl()) {
    std::vector<ParamSpec> specs = entry.type->info.params;
    for (const ParamSpec& d : defaults)
      if (d.name != ccl_param::kAlgorithm.name) specs.push_back(d);
    std::vector<RawParam> merged;
    for (const RawParam& r : given)
      if (r.name != ccl_param::kAlgorithm.name) merged.push_back(r);
    for (RawParam& r : raw(algos[name], origins, "algorithms." + name)) {
      std::erase_if(merged, [&](const RawParam& m) { return m.name == r.name; });
      merged.push_back(std::move(r));
    }
    Params p = resolve_params(specs, merged, "CCL algorithm " + name, src.name());
    out.algorithms.emplace(name, CclConfig::Entry{&entry.type->info, entry.type->create, std::move(p)});
  }
  if (!out.algorithms.count(out.algorithm)) {
    std::string at = src.name();
    for (const RawParam& r : given)
      if (r.name == ccl_param::kAlgorithm.name) at = r.origin;
    throw ConfigError(at + ": defaults.algorithm '" + out.algorithm + "' is not a registered CCL algorithm" +
                      suggest(out.algorithm, known) + " (kbsim list ccl)");
  }
  return out;
}

}  // namespace

std::vector<std::string> take_ccl_overrides(std::vector<std::string>& sets) {
  std::vector<std::string> out;
  std::erase_if(sets, [&](const std::string& s) {
    if (!is_ccl_override(s)) return false;
    out.push_back(s);
    return true;
  });
  return out;
}

CclConfig load_ccl(const std::filesystem::path& file, const std::vector<std::string>& overrides,
                   const Registry& registry) {
  YamlSource src = YamlSource::load(file);
  return build(src, overrides, registry);
}

CclConfig parse_ccl(const std::string& text, const std::string& name, const std::vector<std::string>& overrides,
                    const Registry& registry) {
  YamlSource src = YamlSource::parse(text, name);
  return build(src, overrides, registry);
}

}  // namespace kbsim::core
