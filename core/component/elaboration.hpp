// Elaboration: what a graph becomes before any component exists. The nodes
// checked, with their implementations and resolved parameters, their ports,
// the links in edge and in port order, the id index, the routing views and the message
// types each port accepts. It depends only on the graph and the registry and
// never changes afterwards, so every system built from an equal graph shares
// one: a bench that builds a fresh system per scenario elaborates once.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "component/id_index.hpp"
#include "fabric/link.hpp"
#include "kbsim/component.hpp"
#include "kbsim/graph.hpp"
#include "kbsim/plugin.hpp"

namespace kbsim::core {

class Registry;

struct Elaboration {
  struct Node {
    std::string id;
    std::string impl;
    std::string library;  ///< the plugin library providing it
    std::string group;    ///< NodeSpec::group
    const ComponentType* type = nullptr;
    Params params;
    Tick send_delay = 0;  ///< its component's promise (ComponentInfo::send_delay_param): 0 when it makes none
    std::vector<Port> in, out;
  };
  std::vector<Node> nodes;
  std::vector<std::string_view> ids;  ///< per node, compact: its id, stamped on every message it sends
  IdIndex index;                      ///< the nodes by id (find_node)
  /// The node whose id is `id`, or kNoNode.
  NodeIndex find_node(std::string_view id) const noexcept { return index.find(id, ids); }
  std::vector<std::uint32_t> stat_begin;  ///< per node: its first statistic in a system's table (+1 sentinel)
  std::uint32_t stat_count = 0;
  /// In port order: node by node, out-port by out-port (out-port p of node n is links[port_begin[n] + p]), so a
  /// system's wires, loads and these are parallel, and a send finds all three by one index.
  std::vector<Link> links;
  std::vector<std::string> link_kinds;    ///< parallel to links
  std::vector<std::uint32_t> port_begin;  ///< first link per node (+1 sentinel)
  std::vector<std::uint32_t> edge_links;  ///< per edge of the graph, its link: reports list links in edge order
  std::vector<std::string> view_names;    ///< index = ViewId; 0 is "all"
  RouteMetric metric = RouteMetric::kLatency;
  /// What a route search reads of each out-port, in port order (parallel to links): where it leads, the
  /// routing views it is excluded from, and its cost: under kLatency the link's latency and one full flit's
  /// serialization, under kDistance its route_mm in nm.
  struct Step {
    NodeIndex dst;
    std::uint32_t exclude_views;
    Tick cost;
    bool operator==(const Step&) const = default;
  };
  std::vector<Step> steps;
  std::vector<NodeIndex> id_order;  ///< per node: its id's place in byte order (kDistance only)
  std::vector<NodeIndex> by_order;  ///< the inverse: the node at each place (kDistance only)
  std::vector<RawParam> attrs;
  std::vector<std::vector<TypeId>> accepts;             ///< per declared port type list (Link::accepts - 1)
  std::vector<std::vector<std::string>> accepts_names;  ///< the same, by name
};

/// Check `graph` against the registry and elaborate it; ConfigError naming file:line:column on any fault.
std::shared_ptr<const Elaboration> elaborate(const Graph& graph, const Registry& registry);

}  // namespace kbsim::core
