// Routing: the core's cached minimum-cost paths (docs/model.md, "Routing
// views") under the graph's metric, and their description for benches.
#include <algorithm>
#include <queue>

#include "component/simulation.hpp"
#include "kbsim/text.hpp"

namespace kbsim::core {

ViewId Simulation::find_view(std::string_view name) const {
  for (std::size_t v = 0; v < view_names_.size(); ++v)
    if (view_names_[v] == name) return static_cast<ViewId>(v);
  throw ConfigError("unknown routing view '" + std::string(name) + "'" + suggest(std::string(name), view_names_));
}

RouteInfo Simulation::route_info(std::string_view from, std::string_view to, std::string_view view) {
  const Route& r = route(find_node(from), find_node(to), find_view(view));
  RouteInfo info;
  const bool distance = metric_ == RouteMetric::kDistance;
  info.cost = distance ? double(r.cost) * 1e-6 : ticks_to_ns(r.cost);
  info.cost_unit = distance ? "mm" : "ns";
  for (std::size_t k = 0; k < r.nodes.size(); ++k) {
    const Node& n = nodes_[r.nodes[k]];
    RouteHop h;
    h.node = n.id;
    h.impl = n.impl;
    h.transit_ns = ticks_to_ns(transit_[r.nodes[k]]);
    if (k < r.ports.size()) {
      std::uint32_t li = out_wires(r.nodes[k])[r.ports[k]].link;
      const Link& l = links_[li];
      h.link_kind = link_kinds_[li];
      h.link_bw_gbs = l.bandwidth_gbs;
      h.link_latency_ns = ticks_to_ns(l.latency);
      h.link_flit_bytes = l.flit_bytes;
    }
    info.hops.push_back(h);
  }
  return info;
}

std::vector<LinkUse> Simulation::link_use() const {
  std::vector<LinkUse> out;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const Link& l = links_[i];
    const Traffic w = use(l);
    if (w.bytes == 0) continue;
    out.push_back({nodes_[l.src].id, nodes_[l.dst].id, link_kinds_[i], w.messages, w.bytes, ticks_to_ns(w.busy)});
  }
  return out;
}

const Simulation::Search& Simulation::search(NodeIndex from, NodeIndex to, ViewId view) {
  // Dijkstra. Latency: link latency + one flit's serialization + the transit
  // cost of every node passed through; ties to the lower node index. Distance:
  // the links' lengths; ties to the node whose id sorts first. A node's link
  // is only replaced by a strictly shorter path, so resuming a search gives
  // each destination the route a fresh search stopping there would.
  const bool distance = metric_ == RouteMetric::kDistance;
  auto rank = [&](NodeIndex v) { return distance ? id_rank_[v] : v; };
  const std::uint64_t key = (std::uint64_t{view} << 32) | from;
  auto [it, fresh] = searches_.try_emplace(key);
  Search& s = it->second;
  if (fresh) {
    s.dist.assign(nodes_.size(), kNever);
    s.via.assign(nodes_.size(), ~0u);
    s.settled.assign(nodes_.size(), false);
    s.dist[from] = 0;
    s.queue.push({0, rank(from)});
  }
  while (!s.settled[to] && !s.queue.empty()) {
    auto [d, r] = s.queue.top();
    s.queue.pop();
    const NodeIndex u = distance ? by_rank_[r] : r;
    if (d != s.dist[u] || s.settled[u]) continue;
    s.settled[u] = true;
    Tick pass = u == from ? 0 : transit_[u];
    for (const Wire& w : out_wires(u)) {
      const std::uint32_t li = w.link;
      const Link& l = links_[li];
      if (l.exclude_views & (1u << view)) continue;
      Tick nd = d + (distance ? route_nm_[li] : pass + l.latency + l.ser_full);
      if (nd < s.dist[l.dst]) {
        s.dist[l.dst] = nd;
        s.via[l.dst] = li;
        s.queue.push({nd, rank(l.dst)});
      }
    }
  }
  return s;
}

const Route& Simulation::route(NodeIndex from, NodeIndex to, ViewId view) {
  if (view >= view_names_.size())
    fail(from, "asks for routing view " + std::to_string(view) + ", which does not exist");
  std::uint64_t key = (std::uint64_t{view} << 56) | (std::uint64_t{from} << 28) | to;
  if (auto it = routes_.find(key); it != routes_.end()) return *it->second;
  const Search& found = search(from, to, view);
  const std::vector<std::uint32_t>& via = found.via;
  if (to != from && !found.settled[to])
    throw ConfigError("topology: no path from " + nodes_[from].id + " to " + nodes_[to].id +
                      (view == 0 ? std::string() : " in routing view '" + view_names_[view] + "'") +
                      " (at t=" + format_ns(ticks_to_ns(now())) + " ns)");
  auto r = std::make_unique<Route>();
  r->cost = found.dist[to];
  for (NodeIndex v = to; v != from;) {
    const std::uint32_t li = via[v];
    const Link& l = links_[li];
    r->nodes.push_back(l.src);
    r->ports.push_back(static_cast<PortIndex>(l.wire - port_begin_[l.src]));
    v = l.src;
  }
  std::reverse(r->nodes.begin(), r->nodes.end());
  std::reverse(r->ports.begin(), r->ports.end());
  r->nodes.push_back(to);
  return *routes_.emplace(key, std::move(r)).first->second;
}

Tick Simulation::control_latency(const Route& route) const {
  Tick t = 0;
  for (std::size_t k = 0; k < route.ports.size(); ++k) {
    if (k > 0) t += transit_[route.nodes[k]];
    t += out_wires(route.nodes[k])[route.ports[k]].latency;
  }
  return t;
}

}  // namespace kbsim::core
