// The registry's lookups and in-process registration, and components.yaml.
#include "plugin/registry.hpp"

#include <algorithm>
#include <iterator>

#include "kbsim/config/yaml.hpp"
#include "kbsim/text.hpp"

namespace fs = std::filesystem;

namespace kbsim::core {

using config::check_keys;
using config::YamlSource;

const std::map<std::string, Registry::ComponentEntry>& Registry::components() const {
  load_pending_kind(OfferKind::kComponent);
  return components_;
}
const std::map<std::string, Registry::BenchEntry>& Registry::benches() const {
  load_pending_kind(OfferKind::kBench);
  return benches_;
}
const std::map<std::string, Registry::SectionEntry>& Registry::sections() const {
  load_pending_kind(OfferKind::kSection);
  return sections_;
}
const std::map<std::string, Registry::CommandEntry>& Registry::commands() const {
  load_pending_kind(OfferKind::kCommand);
  return commands_;
}
const std::map<std::string, Registry::ObserverEntry>& Registry::observers() const {
  load_pending_kind(OfferKind::kObserver);
  return observers_;
}
const std::map<std::string, Registry::ServiceEntry, std::less<>>& Registry::services() const {
  load_pending_kind(OfferKind::kService);
  return services_;
}
const std::map<std::string, Registry::FrontEndEntry>& Registry::frontends() const {
  load_pending_kind(OfferKind::kFrontEnd);
  return frontends_;
}
const std::map<std::pair<std::string, std::string>, Registry::ExtensionEntry>& Registry::extensions() const {
  load_pending_kind(OfferKind::kExtension);
  return extensions_;
}
const Extension* Registry::extension(std::string_view kind, std::string_view name) const {
  load_pending([&](const Offer& o) { return o.kind == OfferKind::kExtension && o.name == kind && o.detail == name; },
               true);
  auto it = extensions_.find({std::string(kind), std::string(name)});
  return it == extensions_.end() ? nullptr : it->second.ext;
}
std::vector<const Extension*> Registry::extensions_of(std::string_view kind) const {
  load_pending([kind](const Offer& o) { return o.kind == OfferKind::kExtension && o.name == kind; });
  std::vector<const Extension*> out;
  for (const auto& [key, entry] : extensions_)
    if (key.first == kind) out.push_back(entry.ext);
  return out;
}

namespace {

/// A bench's name is kebab-case (it is typed on command lines and names output), its summary says something.
void check_bench_info(const BenchInfo& info, const std::string& library) {
  const std::string& n = info.name;
  bool ok = !n.empty() && n.front() >= 'a' && n.front() <= 'z' && n.back() != '-';
  for (std::size_t i = 0; ok && i < n.size(); ++i)
    ok = (n[i] >= 'a' && n[i] <= 'z') || (n[i] >= '0' && n[i] <= '9') || (n[i] == '-' && n[i + 1] != '-');
  if (!ok)
    throw PluginError(library + ": bench name '" + n +
                      "' must be kebab-case: lower-case letters and digits in words joined by single hyphens, "
                      "starting with a letter (e.g. my-bench-2)");
  if (info.summary.find_first_not_of(" \t\n") == std::string::npos)
    throw PluginError(library + ": bench '" + n + "' has no summary (BenchInfo::summary, shown by kbsim list)");
}

/// A component's send_delay_param names one of its float parameters, whose default is not negative.
void check_send_delay(const ComponentInfo& info, const std::string& library) {
  const std::string& name = info.send_delay_param;
  if (name.empty()) return;
  for (const ParamSpec& p : info.params)
    if (p.name == name) {
      if (p.type != ParamType::kFloat)
        throw PluginError(library + ": component type '" + info.type + "' promises its send delay in parameter '" +
                          name + "', which is not a float (ComponentInfo::send_delay_param names one in ns)");
      return;
    }
  throw PluginError(library + ": component type '" + info.type + "' promises its send delay in parameter '" + name +
                    "', which it does not declare (ComponentInfo::send_delay_param names one of its params)");
}

}  // namespace

void Registry::register_descriptor(const PluginDescriptor& d, const Provided& from) {
  // Check everything first, so a rejected library registers nothing.
  auto dup = [&](const std::string& kind, const std::string& name, const std::string& other) {
    throw PluginError(from.path + ": " + kind + " '" + name + "' is already provided by " + other);
  };
  for (const auto& c : d.components) {
    if (auto it = components_.find(c.info.type); it != components_.end())
      dup("component type", c.info.type, it->second.from.path);
    check_send_delay(c.info, from.path);
  }
  for (const auto& b : d.benches) {
    if (auto it = benches_.find(b.info.name); it != benches_.end()) dup("bench", b.info.name, it->second.from.path);
    check_bench_info(b.info, from.path);
  }
  for (const auto& s : d.sections)
    if (auto it = sections_.find(s.name); it != sections_.end())
      dup("configuration section", s.name, it->second.from.path);
  for (const auto& c : d.commands)
    if (auto it = commands_.find(c.info.name); it != commands_.end()) dup("command", c.info.name, it->second.from.path);
  for (const auto& o : d.observers)
    if (auto it = observers_.find(o.info.name); it != observers_.end())
      dup("run observer", o.info.name, it->second.from.path);
  for (const auto& v : d.services)
    if (auto it = services_.find(v.info.name); it != services_.end()) dup("service", v.info.name, it->second.from.path);
  for (const auto& f : d.frontends)
    if (auto it = frontends_.find(f.name); it != frontends_.end())
      dup("topology front-end", f.name, it->second.from.path);
  for (const auto& e : d.extensions)
    if (auto it = extensions_.find({e.kind, e.name}); it != extensions_.end())
      dup(e.kind, e.name, it->second.from.path);
  for (const auto& m : d.messages)
    if (auto it = messages_.find(m.type); it != messages_.end() && it->second.type->name != m.name)
      throw PluginError(from.path + ": message type '" + std::string(m.name) + "' has the type id of '" +
                        std::string(it->second.type->name) + "' (from " + it->second.from.path + "): rename one");
  for (const auto& c : d.components) components_.emplace(c.info.type, ComponentEntry{&c, from});
  for (const auto& b : d.benches) benches_.emplace(b.info.name, BenchEntry{&b, from});
  for (const auto& s : d.sections) sections_.emplace(s.name, SectionEntry{&s, from});
  for (const auto& c : d.commands) commands_.emplace(c.info.name, CommandEntry{&c, from});
  for (const auto& o : d.observers) observers_.emplace(o.info.name, ObserverEntry{&o, from});
  for (const auto& v : d.services) services_.emplace(v.info.name, ServiceEntry{&v, from});
  for (const auto& f : d.frontends) frontends_.emplace(f.name, FrontEndEntry{&f, from});
  for (const auto& e : d.extensions) extensions_.emplace(std::make_pair(e.kind, e.name), ExtensionEntry{&e, from});
  for (const auto& m : d.messages) messages_.try_emplace(m.type, Entry<MessageType>{&m, from});
}

const MessageType* Registry::message_type(TypeId type) const {
  if (!messages_.count(type)) {
    const std::string name = message_offer_name(type);
    load_pending([&](const Offer& o) { return o.kind == OfferKind::kMessage && o.name == name; }, true);
  }
  auto it = messages_.find(type);
  return it == messages_.end() ? nullptr : it->second.type;
}

void Registry::add_message_type(MessageType type, const std::string& library) {
  if (auto it = messages_.find(type.type); it != messages_.end()) {
    if (it->second.type->name == type.name) return;
    throw PluginError(library + ": message type '" + std::string(type.name) + "' has the type id of '" +
                      std::string(it->second.type->name) + "'");
  }
  own_messages_.push_back(std::make_unique<MessageType>(type));
  messages_.try_emplace(type.type, Entry<MessageType>{own_messages_.back().get(), {library, library}});
}

void Registry::add_extension(Extension ext, const std::string& library) {
  if (auto it = extensions_.find({ext.kind, ext.name}); it != extensions_.end())
    throw PluginError(library + ": " + ext.kind + " '" + ext.name + "' is already provided by " + it->second.from.path);
  own_extensions_.push_back(std::move(ext));
  const Extension& e = own_extensions_.back();
  extensions_.emplace(std::make_pair(e.kind, e.name), ExtensionEntry{&e, {library, library}});
}

void Registry::add_service_type(ServiceType type, const std::string& library) {
  if (auto it = services_.find(type.info.name); it != services_.end())
    throw PluginError(library + ": service '" + type.info.name + "' is already provided by " + it->second.from.path);
  own_services_.push_back(std::move(type));
  services_.emplace(own_services_.back().info.name, ServiceEntry{&own_services_.back(), {library, library}});
}

const ServiceType* Registry::service(std::string_view name) const {
  if (!services_.count(name))
    load_pending([&](const Offer& o) { return o.kind == OfferKind::kService && o.name == name; }, true);
  auto it = services_.find(name);
  return it == services_.end() ? nullptr : it->second.type;
}

void Registry::add_component_type(ComponentType type, const std::string& library) {
  if (auto it = components_.find(type.info.type); it != components_.end())
    throw PluginError(library + ": component type '" + type.info.type + "' is already provided by " +
                      it->second.from.path);
  check_send_delay(type.info, library);
  own_components_.push_back(std::move(type));
  components_.emplace(own_components_.back().info.type, ComponentEntry{&own_components_.back(), {library, library}});
}

void Registry::add_bench_type(BenchType type, const std::string& library) {
  check_bench_info(type.info, library);  // also for benches registered in-process (testkit)
  if (auto it = benches_.find(type.info.name); it != benches_.end())
    throw PluginError(library + ": bench '" + type.info.name + "' is already provided by " + it->second.from.path);
  own_benches_.push_back(std::move(type));
  benches_.emplace(own_benches_.back().info.name, BenchEntry{&own_benches_.back(), {library, library}});
}

void Registry::load_components_file(const fs::path& file) {
  YamlSource src = YamlSource::load(file);
  auto where = [&](const YAML::Node& n) { return src.where(n); };
  const YAML::Node& root = src.root();
  if (!root.IsMap()) throw ConfigError(src.where(root) + ": expected a map with key 'components'");
  check_keys(root, {"components"}, "components file", where);
  YAML::Node comps = root["components"];
  if (!comps || !comps.IsMap()) throw ConfigError(src.where(root) + ": 'components' must be a map");
  std::map<std::string, std::string> seen;  // implementation name -> where this file first gives it
  for (const auto& kv : comps) {
    std::string impl = kv.first.Scalar();
    if (auto [it, fresh] = seen.emplace(impl, src.where(kv.first)); !fresh)
      throw ConfigError(src.where(kv.first) + ": implementation '" + impl + "' is given twice (first at " + it->second +
                        ")");
    const YAML::Node& v = kv.second;
    if (!v.IsMap()) throw ConfigError(src.where(v) + ": " + impl + ": expected { library: NAME, type: NAME }");
    check_keys(v, {"library", "type"}, "component '" + impl + "'", where);
    if (!v["library"] || !v["type"])
      throw ConfigError(src.where(v) + ": " + impl + ": needs both 'library' and 'type'");
    map_impl(impl, v["library"].Scalar(), v["type"].Scalar(), src.where(kv.first));
  }
}

void Registry::map_impl(const std::string& impl, const std::string& library, const std::string& type,
                        const std::string& origin) {
  if (auto it = components_.find(type); it != components_.end() && it->second.from.library == library) {
    impls_[impl] = {library, type, origin};
    return;
  }
  const Pending* pending = nullptr;  // the library, not loaded yet: its index says what it provides
  for (const Pending& p : pending_)
    if (p.name == library && !p.loaded) pending = &p;
  if (pending && std::find(pending->offers.begin(), pending->offers.end(), Offer{OfferKind::kComponent, type, {}}) !=
                     pending->offers.end()) {
    impls_[impl] = {library, type, origin};
    return;
  }
  std::vector<std::string> provided;
  for (const auto& [name, entry] : components_)
    if (entry.from.library == library) provided.push_back(name);
  if (pending)
    for (const Offer& o : pending->offers)
      if (o.kind == OfferKind::kComponent) provided.push_back(o.name);
  bool loaded = !provided.empty() || pending;
  for (const auto& l : library_list_) loaded = loaded || l.name == library;
  if (!loaded) {
    std::vector<std::string> dirs;
    for (const auto& d : dirs_) dirs.push_back(d.string());
    throw PluginError(origin + ": " + impl + ": library '" + library + "' not found (looked in: " +
                      (dirs.empty() ? std::string("no plugin directories") : join(dirs)) + ")");
  }
  throw PluginError(origin + ": " + impl + ": library '" + library + "' provides no component type '" + type + "'" +
                    suggest(type, provided));
}

const ComponentType& Registry::component_for_impl(const std::string& impl, const std::string& origin) const {
  auto it = impls_.find(impl);
  if (it == impls_.end()) {
    std::vector<std::string> names;
    for (const auto& [name, entry] : impls_) names.push_back(name);
    throw ConfigError(origin + ": unknown implementation '" + impl + "'" + suggest(impl, names));
  }
  if (const std::string& type = it->second.type; !components_.count(type))  // (one library may offer a type)
    load_pending([&](const Offer& o) { return o.kind == OfferKind::kComponent && o.name == type; }, true);
  return *components_.at(it->second.type).type;
}

std::string Registry::mapping_note(const std::string& impl) const {
  auto it = impls_.find(impl);
  if (it == impls_.end()) return "";
  const ImplEntry& e = it->second;
  return " (" + impl + " is component type '" + e.type + "' of library " + e.library + ", as " + e.origin + " maps it)";
}

std::string Registry::resolve_bench(const std::string& identifier) const {
  if (identifier.find_first_not_of(" \t") == std::string::npos)
    throw UsageError("--bench: give a bench name or number (kbsim list benches)");
  if (identifier.find_first_not_of("0123456789") != std::string::npos) return identifier;
  const auto& all = benches();  // in name order
  const std::size_t k = identifier.size() <= 9 ? std::stoul(identifier) : 0;
  if (k >= 1 && k <= all.size()) return std::next(all.begin(), static_cast<std::ptrdiff_t>(k - 1))->first;
  throw UsageError("--bench " + identifier + ": no bench has that number (kbsim list benches numbers them 1 to " +
                   std::to_string(all.size()) + ")");
}

const BenchType& Registry::bench(const std::string& name) const {
  if (!benches_.count(name))
    load_pending([&](const Offer& o) { return o.kind == OfferKind::kBench && o.name == name; }, true);
  auto it = benches_.find(name);
  if (it == benches_.end()) {
    std::vector<std::string> names;
    for (const auto& [n, entry] : benches()) names.push_back(n);
    throw UsageError("unknown bench '" + name + "'" + suggest(name, names));
  }
  return *it->second.type;
}

}  // namespace kbsim::core
