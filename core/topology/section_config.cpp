#include "topology/section_config.hpp"

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

constexpr const char* kDefaults = "defaults";

/// The given keys of one map as raw parameters, each named by its place.
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

/// Reads one section's document.
class SectionReader {
 public:
  SectionReader(const SectionInfo& info, YamlSource& src, const Registry& registry)
      : info_(info), src_(non_null(src)), origins_(src_) {
    if (!info.entry_kind.empty())
      for (const Extension* e : registry.extensions_of(info.entry_kind)) extensions_.emplace(e->name, e);
  }

  Section read(const std::vector<std::string>& overrides) {
    shape_document();
    for (const std::string& typed : overrides) apply(typed);
    const YAML::Node& root = src_.root();
    std::vector<std::string> keys = {kDefaults};
    if (has_entries()) keys.push_back(info_.entries_key);
    config::check_keys(root, keys, "the " + info_.name + " configuration",
                       [this](const YAML::Node& n) { return origins_.where(n); });

    Section out;
    out.info = &info_;
    out.source = src_.name();
    const std::vector<RawParam> given = raw(root[kDefaults], origins_, kDefaults);
    out.defaults = resolve_params(info_.defaults, given, src_.name() + " defaults", src_.name());
    if (!info_.selector.empty()) out.selected = out.defaults.get_string(info_.selector);
    if (has_entries()) read_entries(given, out);
    if (!info_.selector.empty() && !out.entries.count(out.selected)) refuse_selected(given, out.selected);
    return out;
  }

 private:
  /// An empty document is every default.
  static YamlSource& non_null(YamlSource& src) {
    if (src.root().IsNull()) src.root() = YAML::Node(YAML::NodeType::Map);
    return src;
  }
  bool has_entries() const { return !info_.entry_kind.empty(); }

  /// Each registered entry gets a map, so that an override finds it.
  void shape_document() {
    YAML::Node root = src_.root();
    if (!root.IsMap())
      throw ConfigError(src_.name() + ": the " + info_.name + " configuration is a map with '" + kDefaults + "'" +
                        (has_entries() ? " and '" + info_.entries_key + "'" : std::string()));
    if (!root[kDefaults]) root[kDefaults] = YAML::Node(YAML::NodeType::Map);
    if (!has_entries()) return;
    if (!root[info_.entries_key]) root[info_.entries_key] = YAML::Node(YAML::NodeType::Map);
    if (root[info_.entries_key].IsMap())
      for (const auto& [name, ext] : extensions_)
        if (!root[info_.entries_key][name]) root[info_.entries_key][name] = YAML::Node(YAML::NodeType::Map);
  }

  /// "NAME.KEY=VALUE" as typed, applied at its place in the document.
  void apply(const std::string& typed) {
    const std::string rest = typed.substr(info_.name.size() + 1);
    const std::string entries = info_.entries_key + ".";
    const bool placed =
        rest.rfind(std::string(kDefaults) + ".", 0) == 0 || (has_entries() && rest.rfind(entries, 0) == 0);
    const auto eq = rest.find('='), dot = rest.find('.');
    const bool entry_key = has_entries() && dot != std::string::npos && dot < eq;  // NAME.ENTRY.KEY=VALUE
    apply_override(src_, origins_, placed ? rest : (entry_key ? entries : std::string(kDefaults) + ".") + rest,
                   "--set " + typed);
  }

  void read_entries(const std::vector<RawParam>& given, Section& out) {
    const YAML::Node& map = src_.root()[info_.entries_key];
    if (!map.IsMap())
      throw ConfigError(origins_.where(map) + ": " + info_.entries_key + " must be a map of " + info_.entry_words +
                        " name: parameters");
    for (const auto& kv : map)
      if (!extensions_.count(kv.first.Scalar()))
        throw ConfigError(origins_.where(kv.first) + ": no " + info_.entry_words + " named '" + kv.first.Scalar() +
                          "' is registered" + suggest(kv.first.Scalar(), names()) + list_hint());
    for (const auto& [name, ext] : extensions_) {
      std::vector<ParamSpec> specs = ext->params;
      for (const ParamSpec& d : info_.defaults)
        if (d.name != info_.selector) specs.push_back(d);
      std::vector<RawParam> merged;
      for (const RawParam& r : given)
        if (r.name != info_.selector) merged.push_back(r);
      for (RawParam& r : raw(map[name], origins_, info_.entries_key + "." + name)) {
        std::erase_if(merged, [&](const RawParam& m) { return m.name == r.name; });
        merged.push_back(std::move(r));
      }
      Params p = resolve_params(specs, merged, info_.entry_words + " " + name, src_.name());
      out.entries.emplace(name, Section::Entry{ext, std::move(p)});
    }
  }

  [[noreturn]] void refuse_selected(const std::vector<RawParam>& given, const std::string& selected) const {
    std::string at = src_.name();
    for (const RawParam& r : given)
      if (r.name == info_.selector) at = r.origin;
    throw ConfigError(at + ": " + kDefaults + "." + info_.selector + " '" + selected + "' is not a registered " +
                      info_.entry_words + suggest(selected, names()) + list_hint());
  }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [name, ext] : extensions_) out.push_back(name);
    return out;
  }
  std::string list_hint() const { return " (kbsim list " + info_.entry_kind + ")"; }

  const SectionInfo& info_;
  YamlSource& src_;
  Origins origins_;
  std::map<std::string, const Extension*> extensions_;
};

bool addresses(const std::string& set, const std::string& name) {
  return set.size() > name.size() && set.compare(0, name.size(), name) == 0 && set[name.size()] == '.';
}

}  // namespace

std::vector<std::string> take_section_overrides(std::vector<std::string>& sets, const std::string& name) {
  std::vector<std::string> out;
  std::erase_if(sets, [&](const std::string& s) {
    if (!addresses(s, name)) return false;
    out.push_back(s);
    return true;
  });
  return out;
}

bool addresses_section(const std::string& set, const Registry& registry) {
  for (const auto& [name, entry] : registry.sections())
    if (addresses(set, name)) return true;
  return false;
}

Section load_section(const SectionInfo& info, const std::filesystem::path& file,
                     const std::vector<std::string>& overrides, const Registry& registry) {
  if (file.empty()) return parse_section(info, "", "(built-in " + info.name + " defaults)", overrides, registry);
  YamlSource src = YamlSource::load(file);
  return SectionReader(info, src, registry).read(overrides);
}

Section parse_section(const SectionInfo& info, const std::string& text, const std::string& name,
                      const std::vector<std::string>& overrides, const Registry& registry) {
  YamlSource src = YamlSource::parse(text, name);
  return SectionReader(info, src, registry).read(overrides);
}

}  // namespace kbsim::core
