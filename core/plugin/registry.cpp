#include "plugin/registry.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/dll/shared_library.hpp>
#include <cstring>
#include <fstream>
#include <set>

#include "kbsim/config/yaml.hpp"
#include "kbsim/text.hpp"

namespace fs = std::filesystem;

namespace kbsim::core {

using config::check_keys;
using config::YamlSource;

struct Registry::Library {
  boost::dll::shared_library lib;
};

Registry::Registry() = default;

Registry::~Registry() {
  // Types point into the libraries' descriptors: forget them before unloading.
  components_.clear();
  benches_.clear();
  ccl_.clear();
  commands_.clear();
  observers_.clear();
  services_.clear();
  frontends_.clear();
  extensions_.clear();
  libraries_.clear();
}

std::string library_name(const fs::path& file) {
  std::string stem = file.filename().string();
  if (auto dot = stem.find(".so"); dot != std::string::npos) stem.resize(dot);
  if (stem.rfind("lib", 0) == 0) stem.erase(0, 3);
  return stem;
}

void Registry::add_search_dir(const fs::path& dir, bool must_exist) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    if (must_exist) throw PluginError(dir.string() + ": plugin directory does not exist");
    return;
  }
  dirs_.push_back(fs::weakly_canonical(dir, ec));
}

void Registry::discover() {
  std::set<std::string> seen;
  for (const auto& l : library_list_) seen.insert(l.name);
  for (const fs::path& dir : dirs_) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const fs::path& p = entry.path();
      if (p.filename().string().find(".so") == std::string::npos) continue;
      std::error_code bad;
      if (entry.is_regular_file(bad)) files.push_back(p);
      if (bad) throw PluginError(p.string() + ": cannot load library: " + bad.message());
    }
    if (ec) throw PluginError(dir.string() + ": plugin directory cannot be read: " + ec.message());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      std::string name = library_name(f);
      if (!seen.insert(name).second) {
        spdlog::debug("plugin {} shadowed by an earlier directory", f.string());
        continue;
      }
      load_library(f);
    }
  }
}

namespace {
/// Why `file` is not a complete 64-bit ELF shared object, or "" if it is one:
/// checked before dlopen, which would fault on a truncated file (SIGBUS).
std::string elf_problem(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  Elf64_Ehdr h{};
  if (!in.read(reinterpret_cast<char*>(&h), sizeof h)) return "shorter than an ELF header";
  if (std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0) return "not an ELF file";
  if (h.e_ident[EI_CLASS] != ELFCLASS64) return "not a 64-bit ELF file";
  if (h.e_type != ET_DYN) return "not a shared library";
  std::error_code ec;
  const std::uint64_t size = fs::file_size(file, ec);
  if (ec) return "its size cannot be read";
  auto past_end = [&](std::uint64_t offset, std::uint64_t bytes) { return offset > size || bytes > size - offset; };
  if (past_end(h.e_shoff, std::uint64_t{h.e_shnum} * h.e_shentsize) ||
      past_end(h.e_phoff, std::uint64_t{h.e_phnum} * h.e_phentsize))
    return "truncated (its header tables run past the end of the file)";
  for (unsigned i = 0; i < h.e_phnum; ++i) {
    Elf64_Phdr p{};
    in.seekg(static_cast<std::streamoff>(h.e_phoff + std::uint64_t{i} * h.e_phentsize));
    if (!in.read(reinterpret_cast<char*>(&p), sizeof p)) return "truncated (a program header cannot be read)";
    if (p.p_type == PT_LOAD && past_end(p.p_offset, p.p_filesz))
      return "truncated (a loadable segment runs past the end of the file)";
  }
  return "";
}
}  // namespace

void Registry::load_library(const fs::path& file) {
  if (std::string why = elf_problem(file); !why.empty())
    throw PluginError(file.string() + ": cannot load library: " + why);
  auto lib = std::make_unique<Library>();
  try {
    // RTLD_NOW: an unresolved symbol is an error here, naming the library, not
    // a loader abort in the middle of a run. RTLD_NODELETE: a library stays
    // mapped after the registry is gone, so an exception or message created by
    // plugin code outlives it safely.
    lib->lib.load(file, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local |
                            static_cast<boost::dll::load_mode::type>(RTLD_NODELETE));
  } catch (const std::exception& e) {
    throw PluginError(file.string() + ": cannot load library: " + e.what());
  }
  if (!lib->lib.has(KBSIM_PLUGIN_SYMBOL))
    throw PluginError(file.string() + ": not a kbsim plugin (no '" KBSIM_PLUGIN_SYMBOL "' entry point)");
  const PluginDescriptor* d = nullptr;
  try {
    d = lib->lib.get_alias<PluginEntry>(KBSIM_PLUGIN_SYMBOL)();
  } catch (const std::exception& e) {
    throw PluginError(file.string() + ": plugin registration failed: " + e.what());
  }
  if (d == nullptr) throw PluginError(file.string() + ": entry point returned no descriptor");
  if (d->abi_version != kAbiVersion)
    throw PluginError(file.string() + ": built for kbsim ABI " + std::to_string(d->abi_version) +
                      ", this kbsim has ABI " + std::to_string(kAbiVersion) + " (rebuild it against this SDK)");
  Provided from{library_name(file), file.string()};
  register_descriptor(*d, from);
  library_list_.push_back({from.library, from.path, d->build_tag ? d->build_tag : "", d->name ? d->name : ""});
  libraries_.push_back(std::move(lib));
}

void Registry::register_descriptor(const PluginDescriptor& d, const Provided& from) {
  // Check everything first, so a rejected library registers nothing.
  auto dup = [&](const std::string& kind, const std::string& name, const std::string& other) {
    throw PluginError(from.path + ": " + kind + " '" + name + "' is already provided by " + other);
  };
  for (const auto& c : d.components)
    if (auto it = components_.find(c.info.type); it != components_.end())
      dup("component type", c.info.type, it->second.from.path);
  for (const auto& b : d.benches)
    if (auto it = benches_.find(b.info.name); it != benches_.end()) dup("bench", b.info.name, it->second.from.path);
  for (const auto& a : d.ccl)
    if (auto it = ccl_.find(a.info.name); it != ccl_.end()) dup("CCL algorithm", a.info.name, it->second.from.path);
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
  for (const auto& a : d.ccl) ccl_.emplace(a.info.name, CclEntry{&a, from});
  for (const auto& c : d.commands) commands_.emplace(c.info.name, CommandEntry{&c, from});
  for (const auto& o : d.observers) observers_.emplace(o.info.name, ObserverEntry{&o, from});
  for (const auto& v : d.services) services_.emplace(v.info.name, ServiceEntry{&v, from});
  for (const auto& f : d.frontends) frontends_.emplace(f.name, FrontEndEntry{&f, from});
  for (const auto& e : d.extensions) extensions_.emplace(std::make_pair(e.kind, e.name), ExtensionEntry{&e, from});
  for (const auto& m : d.messages) messages_.try_emplace(m.type, Entry<MessageType>{&m, from});
}

const MessageType* Registry::message_type(TypeId type) const {
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
  auto it = services_.find(name);
  return it == services_.end() ? nullptr : it->second.type;
}

void Registry::add_component_type(ComponentType type, const std::string& library) {
  if (auto it = components_.find(type.info.type); it != components_.end())
    throw PluginError(library + ": component type '" + type.info.type + "' is already provided by " +
                      it->second.from.path);
  own_components_.push_back(std::move(type));
  components_.emplace(own_components_.back().info.type, ComponentEntry{&own_components_.back(), {library, library}});
}

void Registry::add_bench_type(BenchType type, const std::string& library) {
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
  std::vector<std::string> provided;
  for (const auto& [name, entry] : components_)
    if (entry.from.library == library) provided.push_back(name);
  bool loaded = !provided.empty();
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
  return *components_.at(it->second.type).type;
}

const BenchType& Registry::bench(const std::string& name) const {
  auto it = benches_.find(name);
  if (it == benches_.end()) {
    std::vector<std::string> names;
    for (const auto& [n, entry] : benches_) names.push_back(n);
    throw UsageError("unknown bench '" + name + "'" + suggest(name, names));
  }
  return *it->second.type;
}

}  // namespace kbsim::core
