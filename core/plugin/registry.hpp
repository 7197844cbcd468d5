// Plugin discovery and the registry of what plugins provide (component types,
// benches, commands, run observers, services, topology front-ends,
// configuration sections, model extensions), plus the implementation-name map from
// components.yaml.
#pragma once

#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kbsim/plugin.hpp"
#include "plugin/plugin_index.hpp"

namespace kbsim::core {

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  /// Directories searched, in order. Missing directories are an error when
  /// `must_exist` (an explicit --plugins DIR), silently skipped otherwise.
  void add_search_dir(const std::filesystem::path& dir, bool must_exist);
  const std::vector<std::filesystem::path>& search_dirs() const noexcept { return dirs_; }

  /// Find every plugin library (*.so) in the search directories: sorted by
  /// file name within a directory; the first library of a given name wins.
  /// A library the directory's index describes (plugin_index.hpp) is loaded
  /// when something it provides is first asked for; any other is loaded now.
  /// `use_index` false loads every library now. Then the same for the plugin
  /// files a loader takes (kbsim/plugin.hpp, PluginFileLoader: *.py), once
  /// every library is known, so a loader from any directory serves them all.
  void discover(bool use_index = true);
  /// Load one library file. Throws PluginError naming the path and the reason.
  void load_library(const std::filesystem::path& file);
  /// Load one plugin file through the loader of its suffix. Throws PluginError.
  void load_plugin_file(const std::filesystem::path& file);
  /// Keep going past plugin files (not libraries) that fail to load at discovery, keeping their errors
  /// (`kbsim list` shows what did load, then what did not).
  void set_tolerant(bool tolerant) noexcept { tolerant_ = tolerant; }
  /// The errors of the plugin files a tolerant discovery passed over.
  const std::vector<std::string>& broken() const noexcept { return broken_; }

  /// In-process registration (tests, mocks). `library` names the provider in messages.
  void add_component_type(ComponentType type, const std::string& library = "(in-process)");
  void add_bench_type(BenchType type, const std::string& library = "(in-process)");
  void add_extension(Extension ext, const std::string& library = "(in-process)");
  void add_service_type(ServiceType type, const std::string& library = "(in-process)");

  /// Read a components.yaml; its entries add to (and override) earlier ones.
  void load_components_file(const std::filesystem::path& file);
  /// Map an implementation name to a component type provided by `library`.
  void map_impl(const std::string& impl, const std::string& library, const std::string& type,
                const std::string& origin);

  // Lookups load what they need (a library found by discover() and not yet
  // loaded); so do the whole lists below, for their kind. Loading on first use
  // fills a cache, so these stay const; a Registry is not shared between threads.

  /// The component type behind an implementation name; ConfigError with the
  /// closest known names if it is unknown.
  const ComponentType& component_for_impl(const std::string& impl, const std::string& origin) const;
  /// " (IMPL is component type T of library L, as FILE:LINE:COLUMN maps it)": appended to an error that a
  /// components.yaml entry may have caused (wiring, parameters), so the entry is named; "" for an unknown name.
  std::string mapping_note(const std::string& impl) const;
  const BenchType& bench(const std::string& name) const;
  /// The bench a `--bench` identifier names: a name, or a number of `kbsim list benches` (1-based, in name order;
  /// numbers change as benches are added, so scripts use names). UsageError for a blank one or a number out of range.
  std::string resolve_bench(const std::string& identifier) const;
  /// The provider of a service, or nullptr.
  const ServiceType* service(std::string_view name) const;
  /// A message type that can cross between processes, or nullptr.
  const MessageType* message_type(TypeId type) const;
  /// The model extensions of one kind, by name.
  std::vector<const Extension*> extensions_of(std::string_view kind) const;
  /// The model extension of one kind and name, or nullptr: only its provider is loaded.
  const Extension* extension(std::string_view kind, std::string_view name) const;
  void add_message_type(MessageType type, const std::string& library = "(in-process)");

  struct Provided {
    std::string library;  ///< library name (file stem without "lib"), or "(in-process)"
    std::string path;
  };
  template <class T>
  struct Entry {
    const T* type;
    Provided from;
  };
  using ComponentEntry = Entry<ComponentType>;
  using BenchEntry = Entry<BenchType>;
  using SectionEntry = Entry<SectionInfo>;
  using CommandEntry = Entry<CommandType>;
  using ObserverEntry = Entry<ObserverType>;
  using ServiceEntry = Entry<ServiceType>;
  using FrontEndEntry = Entry<FrontEndType>;
  struct ExtensionEntry {
    const Extension* ext;
    Provided from;
  };
  struct ImplEntry {
    std::string library, type, origin;
  };
  struct LibraryEntry {
    std::string name, path, build_tag, plugin_name;
    std::vector<Offer> offers;  ///< what it provides
  };
  const std::map<std::string, ComponentEntry>& components() const;
  const std::map<std::string, BenchEntry>& benches() const;
  /// The configuration sections plugins declare (kbsim/config_section.hpp).
  const std::map<std::string, SectionEntry>& sections() const;
  const std::map<std::string, ImplEntry>& impls() const noexcept { return impls_; }
  const std::map<std::string, CommandEntry>& commands() const;
  const std::map<std::string, ObserverEntry>& observers() const;
  const std::map<std::string, ServiceEntry, std::less<>>& services() const;
  const std::map<std::string, FrontEndEntry>& frontends() const;
  /// Keyed by (kind, name).
  const std::map<std::pair<std::string, std::string>, ExtensionEntry>& extensions() const;
  /// Every library found (all of them loaded).
  const std::vector<LibraryEntry>& libraries() const;
  /// How many libraries are loaded so far.
  std::size_t loaded_libraries() const noexcept { return library_list_.size(); }

 private:
  struct Library;
  /// A library discover() found in an index and has not loaded yet.
  struct Pending {
    std::filesystem::path file;
    std::string name;
    std::vector<Offer> offers;
    bool loaded = false;
    bool by_loader = false;  ///< a plugin file (load_plugin_file), not a library
  };
  void register_descriptor(const PluginDescriptor& d, const Provided& from);
  void add_pending(const std::filesystem::path& file, std::vector<Offer> offers, bool by_loader);
  /// Register what `d` (loaded from `file`) provides.
  void adopt(const std::filesystem::path& file, const PluginDescriptor* d);
  /// The suffixes ("py") some loader takes, known from the libraries loaded and found.
  std::vector<std::string> loader_suffixes() const;
  /// PluginError if an offer of `file` clashes with one of the pending libraries (and, `against_loaded`, of the
  /// loaded ones).
  void check_offers(const std::filesystem::path& file, const std::vector<Offer>& offers, bool against_loaded) const;
  /// Load the pending libraries with an offer `want` accepts (only the first of them when `first_only`).
  void load_pending(const std::function<bool(const Offer&)>& want, bool first_only = false) const;
  void load_pending_kind(OfferKind kind) const;

  std::vector<std::filesystem::path> dirs_;
  std::vector<std::unique_ptr<Library>> libraries_;
  std::vector<Pending> pending_;
  bool tolerant_ = false;
  std::vector<std::string> broken_;
  std::vector<LibraryEntry> library_list_;
  std::map<std::string, ComponentEntry> components_;
  std::map<std::string, BenchEntry> benches_;
  std::map<std::string, SectionEntry> sections_;
  std::map<std::string, ImplEntry> impls_;
  std::map<std::string, CommandEntry> commands_;
  std::map<std::string, ObserverEntry> observers_;
  std::map<std::string, ServiceEntry, std::less<>> services_;
  std::map<std::string, FrontEndEntry> frontends_;
  /// By type id. An SDK header's type is registered by every library that uses it: the first one's entry serves.
  std::map<TypeId, Entry<MessageType>> messages_;
  std::vector<std::unique_ptr<MessageType>> own_messages_;
  std::map<std::pair<std::string, std::string>, ExtensionEntry> extensions_;
  std::deque<Extension> own_extensions_;
  std::deque<ServiceType> own_services_;
  std::deque<ComponentType> own_components_;
  std::deque<BenchType> own_benches_;
};

/// The plugin library being loaded now (its static initializers or entry point may be running), or nullptr:
/// for the crash handler, which names it. Async-signal-safe to read.
const char* library_being_loaded() noexcept;

/// Load every library and plugin file in `dir` and write its index (plugin_index.hpp). The loaders of plugin files
/// may come from `loader_dirs` too (the builtin plugins'). Throws PluginError.
void index_plugin_directory(const std::filesystem::path& dir,
                            const std::vector<std::filesystem::path>& loader_dirs = {});

/// "kbsim_forwarding" from ".../libkbsim_forwarding.so".
std::string library_name(const std::filesystem::path& file);

}  // namespace kbsim::core
