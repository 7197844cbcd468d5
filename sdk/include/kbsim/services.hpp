// Typed services: objects a plugin provides to the components and benches of
// one simulated system (the host runtime, the memory store, a kernel
// catalogue, compute slots...). The core only creates, caches and finishes
// them; what a service offers is declared by its interface, in the kit that
// owns it. A service interface names itself:
//
//   class MemoryStore : public kbsim::Service {
//    public:
//     static constexpr std::string_view kServiceName = "memory_store";
//     ...
//   };
//
// and a plugin provides an implementation under that name
// (kbsim::add_service<PageStore>(plugin), see kbsim/plugin.hpp). A component
// asks with service<MemoryStore>() (kbsim/component.hpp), a bench with
// system.service<MemoryStore>() (kbsim/bench.hpp). One instance per system,
// created on first use.
#pragma once

#include <concepts>
#include <string>
#include <string_view>

#include "kbsim/bytes.hpp"
#include "kbsim/errors.hpp"

namespace kbsim {

class System;
class Simulator;

class Service {
 public:
  virtual ~Service() = default;
  /// Called once after the bench returned and before the components'
  /// finish(), in reverse order of creation (a service finishes before the
  /// services it was built on).
  virtual void finish() {}
};

/// A service that components tell things the bench reads (a host runtime's completions), kept alike on every
/// process of a run split over mpirun's ranks (docs/scale-out.md). There the bench runs on every process, but a
/// component calls the service only on the process that runs it. After each run, the core has every process write
/// what its components told the service during the run (save_news), and gives each process every other's
/// (load_news, in rank order), before the bench goes on.
class ReplicatedService {
 public:
  virtual void save_news(ByteWriter& w) = 0;
  virtual void load_news(ByteReader& r) = 0;

 protected:
  ~ReplicatedService() = default;
};

/// An interface with a name: the argument of service<T>().
template <class T>
concept NamedService = std::derived_from<T, Service> && requires {
  { T::kServiceName } -> std::convertible_to<std::string_view>;
};

struct ServiceInfo {
  std::string name;  ///< the interface's kServiceName
  std::string summary;
};

struct ServiceType {
  ServiceInfo info;
  /// A new instance for `system` (`sim` is the same system as its components
  /// see it), or nullptr when the service is not available there.
  Service* (*create)(System& system, Simulator& sim);
};

/// `s` as interface T; a provider registered under T's name that does not implement T is a plugin error.
template <NamedService T>
T* service_cast(Service* s) {
  if (!s) return nullptr;
  if (T* t = dynamic_cast<T*>(s)) return t;
  throw PluginError("the provider of service '" + std::string(T::kServiceName) +
                    "' does not implement its interface (built against another kit?)");
}

/// The error for a service nobody provides.
inline ConfigError no_service(std::string_view name) {
  return ConfigError("no loaded plugin provides the service '" + std::string(name) +
                     "' on this system (see 'kbsim list services')");
}

}  // namespace kbsim
