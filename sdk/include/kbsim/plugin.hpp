// The plugin entry point. Every plugin library has exactly one:
//
//   KBSIM_PLUGIN("my_plugin") {
//     kbsim::add_component<MyComponent>(plugin);
//     kbsim::add_bench<MyBench>(plugin);
//   }
//
// A library may provide any mix of component types, benches, commands
// (kbsim/command.hpp), run observers and their flags (kbsim/observer.hpp),
// services (kbsim/services.hpp), topology front-ends
// (kbsim/config/frontend.hpp), configuration sections
// (kbsim/config_section.hpp) and model extensions (e.g. tl kernels,
// kbsim/pe/kernels.hpp; the PE kit's collective algorithms).
#pragma once

#include <boost/dll/alias.hpp>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kbsim/bench.hpp"
#include "kbsim/command.hpp"
#include "kbsim/component.hpp"
#include "kbsim/config_section.hpp"
#include "kbsim/observer.hpp"
#include "kbsim/services.hpp"

namespace kbsim {

/// Bumped whenever anything a plugin compiles against changes layout or meaning.
inline constexpr std::uint32_t kAbiVersion = 22;

#define KBSIM_STR2_(x) #x
#define KBSIM_STR_(x) KBSIM_STR2_(x)
#if defined(__clang__)
#define KBSIM_BUILD_TAG "clang-" KBSIM_STR_(__clang_major__) " abi" KBSIM_STR_(__GXX_ABI_VERSION)
#elif defined(__GNUC__)
#define KBSIM_BUILD_TAG "gcc-" KBSIM_STR_(__GNUC__) "." KBSIM_STR_(__GNUC_MINOR__) " abi" KBSIM_STR_(__GXX_ABI_VERSION)
#else
#define KBSIM_BUILD_TAG "unknown"
#endif

struct ComponentType {
  ComponentInfo info;
  /// A function object: a component a plugin file declares (PluginFileLoader) carries its file.
  std::function<Component*(const ComponentContext&)> create;
};

struct BenchType {
  BenchInfo info;
  /// A function object, not a plain pointer: a bench a plugin file declares (PluginFileLoader) carries its file.
  std::function<Bench*()> create;
};

namespace config {
class FrontEnd;
}

/// A topology front-end (kbsim/config/frontend.hpp; register with add_frontend<T>).
struct FrontEndType {
  std::string name;
  std::string summary;
  config::FrontEnd* (*create)();
};

/// A message type that can cross between processes (Message::save/load): its name, id and how to make one (from
/// the pool of the library that registered it) for load to fill in.
struct MessageType {
  std::string_view name;
  TypeId type;
  Ref<Message> (*make)();
};

/// What a plugin library returns. The first two fields are frozen forever so
/// the loader can refuse a library of another ABI before touching the rest.
struct PluginDescriptor {
  std::uint32_t abi_version;
  const char* build_tag;
  const char* name;
  std::vector<ComponentType> components;
  std::vector<BenchType> benches;
  std::vector<SectionInfo> sections;
  std::vector<Extension> extensions;
  std::vector<FrontEndType> frontends;
  std::vector<CommandType> commands;
  std::vector<ObserverType> observers;
  std::vector<ServiceType> services;
  std::vector<MessageType> messages;
};

template <class T>
void add_component(PluginDescriptor& plugin) {
  plugin.components.push_back({T::info(), [](const ComponentContext& c) -> Component* { return new T(c); }});
}

/// A component type `info` describes, made by `create`.
inline void add_component(PluginDescriptor& plugin, ComponentInfo info,
                          std::function<Component*(const ComponentContext&)> create) {
  plugin.components.push_back({std::move(info), std::move(create)});
}

template <class T>
void add_bench(PluginDescriptor& plugin) {
  plugin.benches.push_back({T::info(), []() -> Bench* { return new T(); }});
}

/// A configuration section the plugin declares (kbsim/config_section.hpp).
inline void add_section(PluginDescriptor& plugin, SectionInfo section) {
  plugin.sections.push_back(std::move(section));
}

template <class T>
void add_command(PluginDescriptor& plugin) {
  plugin.commands.push_back({T::info(), []() -> Command* { return new T(); }});
}

/// T has `static ObserverInfo info()` and `static T* create(const RunRequest&)` (nullptr: not in this run).
template <class T>
void add_observer(PluginDescriptor& plugin) {
  plugin.observers.push_back({T::info(), [](const RunRequest& r) -> RunObserver* { return T::create(r); }});
}

/// T implements a NamedService interface; it has `static T* create(System&, Simulator&)` (nullptr: not here).
template <class T>
void add_service(PluginDescriptor& plugin, std::string summary) {
  plugin.services.push_back({{std::string(T::kServiceName), std::move(summary)},
                             [](System& s, Simulator& k) -> Service* { return T::create(s, k); }});
}

/// T is a Message with kName and kType that overrides save and load.
template <class T>
void add_message(PluginDescriptor& plugin) {
  plugin.messages.push_back({T::kName, T::kType, []() -> Ref<Message> { return make_message<T>(); }});
}

/// T is an OpPayload with kName that overrides payload_name and save, and has `static std::shared_ptr<const
/// OpPayload> load(ByteReader&)`: records carrying it can cross between the processes of a split run.
template <class T>
void add_payload(PluginDescriptor& plugin, std::string summary) {
  static const OpPayloadType type{&T::load};
  plugin.extensions.push_back({std::string(OpPayloadType::kPayloadKind), std::string(T::kName), std::move(summary),
                               std::shared_ptr<const void>(&type, [](const void*) {})});
}

using PluginEntry = const PluginDescriptor*();

/// A loader of plugin files that are not shared libraries (Python files, sdk/README.md "Write it in Python"):
/// the data of an extension of kind kKind named by the file suffix it takes ("py"). Discovery finds the files of
/// that suffix in the plugin directories and hands each to `load`, which returns what the file provides (alive
/// until the process ends) or throws PluginError naming the file. The directory's index lists what such a file
/// provides, as a library's: the loader's own library is loaded only when a file of its suffix is.
struct PluginFileLoader {
  static constexpr std::string_view kKind = "plugin-loader";
  const PluginDescriptor* (*load)(const std::filesystem::path& file);
};

}  // namespace kbsim

/// The symbol name the loader looks up.
#define KBSIM_PLUGIN_SYMBOL "kbsim_plugin"

#define KBSIM_PLUGIN(NAME)                                                                                          \
  static void kbsim_plugin_register_(::kbsim::PluginDescriptor& plugin);                                            \
  static const ::kbsim::PluginDescriptor* kbsim_plugin_entry_() {                                                   \
    static const ::kbsim::PluginDescriptor descriptor = [] {                                                        \
      ::kbsim::PluginDescriptor d{::kbsim::kAbiVersion, KBSIM_BUILD_TAG, NAME, {}, {}, {}, {}, {}, {}, {}, {}, {}}; \
      kbsim_plugin_register_(d);                                                                                    \
      return d;                                                                                                     \
    }();                                                                                                            \
    return &descriptor;                                                                                             \
  }                                                                                                                 \
  BOOST_DLL_ALIAS(kbsim_plugin_entry_, kbsim_plugin)                                                                \
  static void kbsim_plugin_register_(::kbsim::PluginDescriptor& plugin)
