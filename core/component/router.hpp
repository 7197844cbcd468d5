// A system's routing (docs/model.md, "Routing views"): the cost each node
// charges to pass it (its transit cost, which its component declares) and the
// minimum-cost routes under those costs and the graph's metric, found on first
// use and kept in a table shared with the other systems of the elaboration
// while their costs are the same (route_table.hpp).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "component/elaboration.hpp"
#include "component/route_table.hpp"

namespace kbsim::core {

class Router {
 public:
  /// `routes`: a table shared with other systems of `el` (nullptr: one of its own).
  Router(const Elaboration& el, std::shared_ptr<RouteTable> routes);

  /// The route from `from` to `to` in routing view `view` (which exists); nullptr when there is none.
  const Route* route(NodeIndex from, NodeIndex to, ViewId view);
  /// A view by name; ConfigError naming the known ones if it is unknown.
  ViewId find_view(std::string_view name) const;
  std::size_t views() const noexcept { return el_.view_names.size(); }
  const std::string& view_name(ViewId view) const { return el_.view_names.at(view); }

  Tick transit(NodeIndex n) const noexcept { return transit_[n]; }
  /// A component declares what passing its node costs. After routing began, routes asked for from now on are found
  /// under the new costs, in a table of this system's own (the shared one, holding routes other systems found,
  /// stays theirs).
  void set_transit(NodeIndex n, Tick cost);
  /// The latency of a control message (no bytes) along `route`: its links' latencies and the transit costs of the
  /// nodes it passes.
  Tick control_latency(const Route& route) const;

 private:
  /// routes_, made this system's own (or fresh) when its transit costs are not the table's.
  RouteTable& table();
  /// Leave routes_ for a fresh table of this system's own, under its current transit costs.
  void own_routes();
  /// The search from `from`, run until `to` is settled (or nothing is left): the table's scratch, holding its marks.
  const RouteTable::Stamped* search(RouteTable& table, NodeIndex from, NodeIndex to, ViewId view);

  /// route() past the memo: the table's route, found and kept when it has none.
  const Route* find(std::uint64_t key, NodeIndex from, NodeIndex to, ViewId view);
  /// Per node, in `view`: its one out-port (in port order) when it has exactly one way out, else kNoExit.
  const std::vector<std::uint32_t>& only_exits(ViewId view);
  static constexpr std::uint32_t kNoExit = ~std::uint32_t{0};
  /// Per node, in `view`: 1 when it is a dead end (its one way out leads to the one node that reaches it), which
  /// no route passes through.
  const std::vector<std::uint8_t>& dead_ends(ViewId view);

  const Elaboration& el_;
  std::vector<Tick> transit_;                      ///< per node
  std::vector<std::vector<std::uint32_t>> exits_;  ///< only_exits, per view, made on first use
  std::vector<std::vector<std::uint8_t>> ends_;    ///< dead_ends, per view, made on first use
  struct Memo {
    std::uint64_t key = ~std::uint64_t{0};  ///< (no route's: views are fewer than 32)
    const Route* route = nullptr;
  };
  static constexpr unsigned kMemoBits = 12;
  std::vector<Memo> memo_;  ///< routes found, by a hash of their key (made on first use); cleared with the table
  /// The table this system uses; tables it left are kept, as messages may still point to their routes.
  std::shared_ptr<RouteTable> routes_;
  bool bound_ = false;  ///< whether this system has routed yet (and so holds to routes_->transit)
  std::vector<std::shared_ptr<RouteTable>> left_;
};

}  // namespace kbsim::core
