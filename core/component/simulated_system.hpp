// What a bench sees of a simulation (kbsim/bench.hpp's System): run it, finish
// it, read its statistics, routes and link traffic, offer services and read its
// op log. Each Simulation has one (Simulation::system()); what components see
// of it is the Simulation itself (kbsim/component.hpp's Simulator).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "fabric/link.hpp"
#include "kbsim/bench.hpp"

namespace kbsim::core {

class Simulation;

class SimulatedSystem final : public System {
 public:
  explicit SimulatedSystem(Simulation& sim) : sim_(sim) {}
  /// A view that owns its simulation (for a caller that is given a System to own: a command's build).
  explicit SimulatedSystem(std::unique_ptr<Simulation> sim);
  ~SimulatedSystem() override;
  Simulation& simulation() noexcept { return sim_; }
  const Simulation& simulation() const noexcept { return sim_; }
  /// A node's statistics, parallel to its type's info.stats.
  std::span<const Stat> stats_of(NodeIndex n) const noexcept;
  /// What happened on `link` in this system: messages, flits, bytes, busy time.
  Traffic traffic(const Link& link) const noexcept;
  /// Finish it (its services, then its components) and free what only running needs (Simulation::release).
  /// Afterwards running it or reaching a component or service is a BenchError (RELEASED), as is releasing it again.
  void release();

  void run_until(Tick t) override;
  void run() override { run_until(kNever); }
  void finish() override;
  Tick now() const noexcept override;
  std::uint64_t events() const noexcept override;
  bool idle() const noexcept override;
  bool is_split() const noexcept override;
  void request_stop() noexcept override;
  std::vector<std::string> waiting() override;

  std::size_t node_count() const noexcept override;
  std::string_view node_id(NodeIndex n) const noexcept override;
  NodeIndex find_node(std::string_view id) const override;
  NodeIndex lookup_node(std::string_view id) const noexcept override;
  Component& component(std::string_view node) override;
  Component& component(NodeIndex n) override;
  const Stat& stat(std::string_view node, std::string_view name) const override;
  std::span<const RawParam> attrs() const noexcept override;

  std::string_view view_name(ViewId view) const override;
  RouteInfo route_info(std::string_view from, std::string_view to, std::string_view view) override;
  std::vector<LinkUse> link_use() const override;

  Service* find_service(std::string_view name) override;
  void provide(std::string_view name, Service& service) override;
  void share(ReplicatedService& news) override;
  void unshare(ReplicatedService& news) noexcept override;
  OpLogView* op_log() noexcept override;
  std::vector<const Extension*> extensions(std::string_view kind) const override;
  const Extension* extension(std::string_view kind, std::string_view name) const override;

 private:
  /// BenchError (RELEASED) naming `call` once the system was released.
  void live(const char* call) const;

  std::unique_ptr<Simulation> owned_;
  Simulation& sim_;
};

}  // namespace kbsim::core
