// Routing: the core's cached minimum-cost paths (docs/model.md, "Routing
// views") under the graph's metric, and their description for benches.
#include <algorithm>

#include "component/router.hpp"
#include "component/simulation.hpp"
#include "kbsim/text.hpp"

namespace kbsim::core {

Router::Router(const Elaboration& el, std::shared_ptr<RouteTable> routes)
    : el_(el), transit_(el.nodes.size(), 0), routes_(routes ? std::move(routes) : std::make_shared<RouteTable>()) {}

ViewId Router::find_view(std::string_view name) const {
  for (std::size_t v = 0; v < el_.view_names.size(); ++v)
    if (el_.view_names[v] == name) return static_cast<ViewId>(v);
  throw ConfigError("unknown routing view '" + std::string(name) + "'" + suggest(std::string(name), el_.view_names));
}

const Route& Simulation::route(NodeIndex from, NodeIndex to, ViewId view) {
  if (view >= router_.views())
    fail_at(*this, from, "asks for routing view " + std::to_string(view) + ", which does not exist");
  if (const Route* r = router_.route(from, to, view)) [[likely]]
    return *r;
  throw ConfigError("topology: no path from " + nodes_[from].id + " to " + nodes_[to].id +
                    (view == 0 ? std::string() : " in routing view '" + router_.view_name(view) + "'") +
                    " (at t=" + format_ns(ticks_to_ns(now())) + " ns)");
}

RouteTable& Router::table() {
  if (!bound_) {
    bound_ = true;
    if (!routes_->bound) {
      routes_->transit = transit_;
      routes_->bound = true;
    } else if (routes_->transit != transit_) {  // its components declared other costs: routes of its own
      own_routes();
    }
  }
  return *routes_;
}

void Router::own_routes() {
  std::fill(memo_.begin(), memo_.end(), Memo{});  // the routes asked for from now on are the new table's
  left_.push_back(std::move(routes_));            // the routes handed out from it stay valid
  routes_ = std::make_shared<RouteTable>();
  routes_->transit = transit_;
  routes_->bound = true;
}

void Router::set_transit(NodeIndex n, Tick cost) {
  if (transit_[n] == cost) return;
  transit_[n] = cost;
  if (bound_) own_routes();
}

const RouteTable::Stamped* Router::search(RouteTable& table, NodeIndex from, NodeIndex to, ViewId view) {
  // Dijkstra. Latency: link latency + one flit's serialization + the transit
  // cost of every node passed through; ties to the lower node index. Distance:
  // the links' lengths; ties to the node whose id sorts first. A node's link
  // is only replaced by a strictly shorter path, so resuming a search gives
  // each destination the route a fresh search stopping there would. A dead
  // end (a PE's engine, reached only from the node its one way out leads
  // to) is settled when reached, and never queued: its one in-link gives its
  // final distance, and nothing is reached through it.
  using Mark = RouteTable::Mark;
  const bool distance = el_.metric == RouteMetric::kDistance;
  auto order = [&](NodeIndex v) { return distance ? el_.id_order[v] : v; };
  const std::uint64_t key = (std::uint64_t{view} << 32) | from;
  auto [it, fresh] = table.searches.try_emplace(key);
  RouteTable::Search& s = it->second;
  table.hold(s, el_.nodes.size());
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
    s.queue.push(order(from));
  }
  const Elaboration::Step* steps = el_.steps.data();
  const std::uint32_t* port_begin = el_.port_begin.data();
  const std::uint32_t excluded = 1u << view;
  const std::uint8_t* dead_end = dead_ends(view).data();
  while (!(marks[to].stamp == stamp && marks[to].mark.settled()) && !s.queue.empty()) {
    const auto d = static_cast<Tick>(s.queue.top() >> 32);
    const auto r = static_cast<NodeIndex>(s.queue.top());
    s.queue.pop();
    const NodeIndex u = distance ? el_.by_order[r] : r;
    Mark& mu = marks[u].mark;  // reached: it was queued
    if (d != mu.dist || mu.settled()) continue;
    mu.via |= Mark::kSettled;
    const Tick pass = distance || u == from ? 0 : transit_[u];
    for (std::uint32_t p = port_begin[u], end = port_begin[u + 1]; p < end; ++p) {
      const Elaboration::Step& step = steps[p];
      if (step.exclude_views & excluded) continue;
      const Tick nd = d + pass + step.cost;
      Mark& m = reach(step.dst);
      if (nd < m.dist) {
        m.dist = nd;
        m.via = p;
        if (dead_end[step.dst])
          m.via |= Mark::kSettled;
        else
          s.queue.push((static_cast<unsigned __int128>(nd) << 32) | order(step.dst));
      }
    }
  }
  return marks;
}

const std::vector<std::uint32_t>& Router::only_exits(ViewId view) {
  if (exits_.size() <= view) exits_.resize(view + 1u);
  std::vector<std::uint32_t>& e = exits_[view];
  if (e.empty()) {
    const std::uint32_t excluded = 1u << view;
    e.assign(el_.nodes.size(), kNoExit);
    for (NodeIndex u = 0; u < el_.nodes.size(); ++u) {
      std::uint32_t ways = 0;
      for (std::uint32_t p = el_.port_begin[u]; p < el_.port_begin[u + 1]; ++p)
        if (!(el_.steps[p].exclude_views & excluded) && ++ways == 1) e[u] = p;
      if (ways != 1) e[u] = kNoExit;
    }
  }
  return e;
}

const std::vector<std::uint8_t>& Router::dead_ends(ViewId view) {
  if (ends_.size() <= view) ends_.resize(view + 1u);
  std::vector<std::uint8_t>& e = ends_[view];
  if (e.empty()) {
    const std::vector<std::uint32_t>& exits = only_exits(view);
    const std::uint32_t excluded = 1u << view;
    e.assign(el_.nodes.size(), 0);
    for (NodeIndex u = 0; u < el_.nodes.size(); ++u) e[u] = exits[u] != kNoExit;
    for (NodeIndex u = 0; u < el_.nodes.size(); ++u)  // reached from another node than its way out leads to: not
      for (std::uint32_t p = el_.port_begin[u]; p < el_.port_begin[u + 1]; ++p) {
        const NodeIndex v = el_.steps[p].dst;
        if (!(el_.steps[p].exclude_views & excluded) && e[v] && el_.steps[exits[v]].dst != u) e[v] = 0;
      }
  }
  return e;
}

const Route* Router::route(NodeIndex from, NodeIndex to, ViewId view) {
  const std::uint64_t key = (std::uint64_t{view} << 56) | (std::uint64_t{from} << 28) | to;
  // Components ask for the same few routes again and again (a DMA engine per packet, an IPCQ per credit): a
  // direct-mapped memo of the routes found, one line each, answers before the table's hash map is touched.
  if (memo_.empty()) memo_.resize(std::size_t{1} << kMemoBits);
  Memo& m = memo_[(key * 0x9E3779B97F4A7C15ull) >> (64 - kMemoBits)];
  if (m.key == key) return m.route;
  const Route* r = find(key, from, to, view);
  if (r) m = {key, r};
  return r;
}

const Route* Router::find(std::uint64_t key, NodeIndex from, NodeIndex to, ViewId view) {
  RouteTable& t = table();
  if (auto it = t.routes.find(key); it != t.routes.end()) return it->second.get();
  // A node with one way out (a PE's engine, an IO CPU) routes through the node it leads to: its search would
  // settle that node first and then find, shifted by one step, what that node's own search finds (ties included,
  // as they compare distances). So its routes are its steps out and that node's route, and its search is not run.
  const std::vector<std::uint32_t>& exits = only_exits(view);
  const bool distance = el_.metric == RouteMetric::kDistance;
  NodeIndex v = from;
  Tick cost = 0;
  std::size_t steps = 0;
  while (v != to && exits[v] != kNoExit && steps <= el_.nodes.size()) {  // (a cycle of single ways: search)
    const Elaboration::Step& step = el_.steps[exits[v]];
    v = step.dst;
    cost += step.cost + (v == to || distance ? 0 : transit_[v]);
    ++steps;
  }
  if (v != from && steps <= el_.nodes.size()) {
    const Route* rest = v == to ? nullptr : route(v, to, view);
    if (v != to && rest == nullptr) return nullptr;
    auto r = std::make_unique<Route>();
    r->cost = cost + (rest ? rest->cost : 0);
    for (NodeIndex u = from; u != v; u = el_.steps[exits[u]].dst) {
      r->nodes.push_back(u);
      r->ports.push_back(static_cast<PortIndex>(exits[u] - el_.port_begin[u]));
    }
    if (rest) {
      r->nodes.insert(r->nodes.end(), rest->nodes.begin(), rest->nodes.end());
      r->ports.insert(r->ports.end(), rest->ports.begin(), rest->ports.end());
    } else {
      r->nodes.push_back(to);
    }
    return t.routes.emplace(key, std::move(r)).first->second.get();
  }
  const RouteTable::Stamped* marks = search(t, from, to, view);
  if (to != from && !(marks[to].stamp == t.stamp && marks[to].mark.settled())) return nullptr;
  auto r = std::make_unique<Route>();
  r->cost = marks[to].mark.dist;
  for (NodeIndex v = to; v != from;) {
    const std::uint32_t p = marks[v].mark.port();
    const NodeIndex src = el_.links[p].src;
    r->nodes.push_back(src);
    r->ports.push_back(static_cast<PortIndex>(p - el_.port_begin[src]));
    v = src;
  }
  std::reverse(r->nodes.begin(), r->nodes.end());
  std::reverse(r->ports.begin(), r->ports.end());
  r->nodes.push_back(to);
  return t.routes.emplace(key, std::move(r)).first->second.get();
}

Tick Router::control_latency(const Route& route) const {
  Tick t = 0;
  for (std::size_t k = 0; k < route.ports.size(); ++k) {
    if (k > 0) t += transit_[route.nodes[k]];
    t += el_.links[el_.port_begin[route.nodes[k]] + route.ports[k]].latency;
  }
  return t;
}

}  // namespace kbsim::core
