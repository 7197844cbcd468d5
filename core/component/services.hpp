// The services of one system (kbsim/services.hpp): those the run provides
// (observers, not owned), and those plugins make on first use (owned, finished
// and destroyed newest first), with the bench's own shared clients.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kbsim/services.hpp"

namespace kbsim::core {

class Registry;

class ServiceBoard {
 public:
  ServiceBoard() = default;
  ServiceBoard(const ServiceBoard&) = delete;
  ServiceBoard& operator=(const ServiceBoard&) = delete;
  ~ServiceBoard() { clear(); }  // (newest first, also when a system's construction failed)

  /// The service named `name`: one provided or made before, else one made now by the plugin that provides it
  /// (for `system`, whose components see `sim`); nullptr when none does, or it declined for this system.
  Service* find(std::string_view name, const Registry& registry, System& system, Simulator& sim);
  /// Offer `service` under `name`, before any was made (Error if one was).
  void provide(std::string_view name, Service& service);
  void share(ReplicatedService& news) { shared_.push_back(&news); }
  void unshare(ReplicatedService& news) noexcept { std::erase(shared_, &news); }
  /// The services whose news the bench reads from every part of a system (ReplicatedService), named: those
  /// components asked for, then the bench's own (share), in that order.
  std::vector<std::pair<std::string, ReplicatedService*>> replicated() const;
  /// Call finish() on every service made, newest first (once).
  void finish();
  /// Destroy the services made, newest first (a service may use those made before it).
  void clear() noexcept;

 private:
  std::vector<std::pair<std::string, Service*>> named_;  ///< provided and made ones, by name (nullptr: none)
  std::vector<std::unique_ptr<Service>> made_;           ///< in the order they were made
  std::vector<ReplicatedService*> shared_;               ///< the bench's own (share), in the order it shared them
  bool finished_ = false;
};

}  // namespace kbsim::core
