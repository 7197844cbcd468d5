// Routing: the core's cached minimum-cost paths (docs/model.md, "Routing
// views") under the graph's metric, and their description for benches.
#include <algorithm>

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

RouteTable& Simulation::route_table() {
  if (!routes_bound_) {
    routes_bound_ = true;
    if (!routes_->bound) {
      routes_->transit = transit_;
      routes_->bound = true;
    } else if (routes_->transit != transit_) {  // its components declared other costs: routes of its own
      own_routes();
    }
  }
  return *routes_;
}

void Simulation::own_routes() {
  left_.push_back(std::move(routes_));  // the routes handed out from it stay valid
  routes_ = std::make_shared<RouteTable>();
  routes_->transit = transit_;
  routes_->bound = true;
}

void Simulation::set_transit_cost(NodeIndex self, Tick cost) {
  if (transit_[self] == cost) return;
  transit_[self] = cost;
  // A cost changed after this system routed: routes asked for from now on are found under the new costs, in a
  // table of its own (the shared one, holding routes other systems found, stays theirs).
  if (routes_bound_) own_routes();
}

const RouteTable::Stamped* Simulation::search(RouteTable& table, NodeIndex from, NodeIndex to, ViewId view) {
  // Dijkstra. Latency: link latency + one flit's serialization + the transit
  // cost of every node passed through; ties to the lower node index. Distance:
  // the links' lengths; ties to the node whose id sorts first. A node's link
  // is only replaced by a strictly shorter path, so resuming a search gives
  // each destination the route a fresh search stopping there would.
  using Mark = RouteTable::Mark;
  const bool distance = metric_ == RouteMetric::kDistance;
  auto rank = [&](NodeIndex v) { return distance ? id_rank_[v] : v; };
  const std::uint64_t key = (std::uint64_t{view} << 32) | from;
  auto [it, fresh] = table.searches.try_emplace(key);
  RouteTable::Search& s = it->second;
  table.hold(s, nodes_.size());
  RouteTable::Stamped* marks = table.scratch.data();
  const std::uint32_t stamp = table.stamp;
  auto reach = [&](NodeIndex v) -> Mark& {  // v's mark, reached now if it was not yet
    if (marks[v].stamp != stamp) {
      marks[v] = {Mark{}, stamp};
      s.reached.push_back(v);
    }
    return marks[v].mark;
  };
  if (fresh) {
    reach(from).dist = 0;
    s.queue.push({0, rank(from)});
  }
  const Elaboration::Step* steps = el_->steps.data();
  const std::uint32_t excluded = 1u << view;
  while (!(marks[to].stamp == stamp && marks[to].mark.settled()) && !s.queue.empty()) {
    auto [d, r] = s.queue.top();
    s.queue.pop();
    const NodeIndex u = distance ? by_rank_[r] : r;
    Mark& mu = marks[u].mark;  // reached: it was queued
    if (d != mu.dist || mu.settled()) continue;
    mu.via |= Mark::kSettled;
    const Tick pass = distance || u == from ? 0 : transit_[u];
    for (std::uint32_t p = port_begin_[u], end = port_begin_[u + 1]; p < end; ++p) {
      const Elaboration::Step& step = steps[p];
      if (step.exclude_views & excluded) continue;
      const Tick nd = d + pass + step.cost;
      Mark& m = reach(step.dst);
      if (nd < m.dist) {
        m.dist = nd;
        m.via = p;
        s.queue.push({nd, rank(step.dst)});
      }
    }
  }
  return marks;
}

const Route& Simulation::route(NodeIndex from, NodeIndex to, ViewId view) {
  if (view >= view_names_.size())
    fail(from, "asks for routing view " + std::to_string(view) + ", which does not exist");
  std::uint64_t key = (std::uint64_t{view} << 56) | (std::uint64_t{from} << 28) | to;
  RouteTable& table = route_table();
  if (auto it = table.routes.find(key); it != table.routes.end()) return *it->second;
  const RouteTable::Stamped* marks = search(table, from, to, view);
  if (to != from && !(marks[to].stamp == table.stamp && marks[to].mark.settled()))
    throw ConfigError("topology: no path from " + nodes_[from].id + " to " + nodes_[to].id +
                      (view == 0 ? std::string() : " in routing view '" + view_names_[view] + "'") +
                      " (at t=" + format_ns(ticks_to_ns(now())) + " ns)");
  auto r = std::make_unique<Route>();
  r->cost = marks[to].mark.dist;
  for (NodeIndex v = to; v != from;) {
    const std::uint32_t p = marks[v].mark.port();
    const NodeIndex src = links_[el_->port_links[p]].src;
    r->nodes.push_back(src);
    r->ports.push_back(static_cast<PortIndex>(p - port_begin_[src]));
    v = src;
  }
  std::reverse(r->nodes.begin(), r->nodes.end());
  std::reverse(r->ports.begin(), r->ports.end());
  r->nodes.push_back(to);
  return *table.routes.emplace(key, std::move(r)).first->second;
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
