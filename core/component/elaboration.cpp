#include "component/elaboration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "kbsim/text.hpp"
#include "plugin/params_resolve.hpp"
#include "plugin/registry.hpp"

namespace kbsim::core {

namespace {
bool accepts(const ComponentInfo& info, const std::string& label) {
  for (const auto& p : info.ports)
    if (p.label == "*" || p.label == label) return true;
  return false;
}
std::vector<std::string> port_labels(const ComponentInfo& info) {
  std::vector<std::string> out;
  for (const auto& p : info.ports) out.push_back(p.label);
  return out;
}

/// Node ids are printed, logged and written everywhere: they keep to a documented set of characters
/// (docs/model.md, "Terms"), so no terminal escape, newline or invalid byte can reach a user's screen or file.
void check_id(const std::string& id, const std::string& origin) {
  for (std::size_t i = 0; i < id.size(); ++i) {
    const char c = id[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("_.:/+@-").find(c) != std::string_view::npos;
    if (ok) continue;
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
    std::string shown;
    for (char d : id) shown += (d >= 0x20 && d < 0x7f) ? d : '?';
    throw ConfigError(origin + ": node id '" + shown + "' has the byte " + hex + " at position " + std::to_string(i) +
                      "; ids use letters, digits and _ . : / + @ -");
  }
}

/// The accepted-types list of the port of `info` that takes edges of `kind` (0: any).
std::uint16_t accepts_of(Elaboration& el, std::vector<std::pair<const PortSpec*, std::uint16_t>>& accepts_index,
                         const ComponentInfo& info, const std::string& kind) {
  const PortSpec* spec = nullptr;
  for (const PortSpec& p : info.ports)
    if (p.label == kind || (!spec && p.label == "*")) spec = &p;
  if (!spec || spec->messages.empty()) return 0;
  for (const auto& [s, index] : accepts_index)
    if (s == spec) return index;
  std::vector<TypeId> ids;
  for (const std::string& name : spec->messages) ids.push_back(type_id(name));
  el.accepts.push_back(std::move(ids));
  el.accepts_names.push_back(spec->messages);
  if (el.accepts.size() > 0xfffe) throw ConfigError("too many distinct port declarations with message types");
  auto index = static_cast<std::uint16_t>(el.accepts.size());
  accepts_index.emplace_back(spec, index);
  return index;
}
}  // namespace

std::shared_ptr<const Elaboration> elaborate(const Graph& graph, const Registry& registry) {
  using Node = Elaboration::Node;
  std::vector<std::pair<const PortSpec*, std::uint16_t>> accepts_index;  // port spec -> its list in el.accepts
  struct Impl {
    const ComponentType* type = nullptr;
    std::string library;
  };
  std::unordered_map<std::string_view, Impl> impls;  // the registry's answers so far, by implementation name
  auto made = std::make_shared<Elaboration>();
  Elaboration& el = *made;
  if (graph.nodes.size() >= (std::size_t{1} << 28))
    throw ConfigError(graph.source + ": " + std::to_string(graph.nodes.size()) + " nodes; at most 2^28 are supported");
  if (graph.edges.size() >= (std::size_t{1} << 29))
    throw ConfigError(graph.source + ": " + std::to_string(graph.edges.size()) + " edges; at most 2^29 are supported");
  el.nodes.resize(graph.nodes.size());
  el.ids.resize(graph.nodes.size());
  el.index.reserve(graph.nodes.size());
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const NodeSpec& spec = graph.nodes[i];
    Node& n = el.nodes[i];
    n.id = spec.id;
    n.impl = spec.impl;
    n.group = spec.group;
    if (n.id.empty()) throw ConfigError(spec.origin + ": node without an id");
    check_id(n.id, spec.origin);
    el.ids[i] = n.id;
    if (const NodeIndex first = el.index.insert(static_cast<NodeIndex>(i), el.ids); first != kNoNode)
      throw ConfigError(spec.origin + ": duplicate node id '" + n.id + "' (first at " + graph.nodes[first].origin +
                        ")");
    auto [known, fresh_impl] = impls.try_emplace(spec.impl);
    if (fresh_impl) {  // (a system has thousands of nodes and a few implementations; an unknown one throws)
      known->second.type = &registry.component_for_impl(spec.impl, spec.origin);
      known->second.library = registry.impls().at(spec.impl).library;  // (known: component_for_impl found it)
    }
    n.type = known->second.type;
    n.library = known->second.library;
    n.params = resolve_params(n.type->info.params, spec.params, spec.impl, spec.origin,
                              [&] { return registry.mapping_note(spec.impl); });
    n.send_delay = 0;
    if (const std::string& promise = n.type->info.send_delay_param; !promise.empty()) {
      const double ns = n.params.get_float(promise);
      if (!(ns >= 0.0) || ns > 1e9)
        throw ConfigError(spec.origin + ": " + n.id + ": " + promise +
                          ": must be between 0 and 1e9 ns (it is the least time between the component acting and "
                          "anything it sends leaving it), got " +
                          format_ns(ns));
      n.send_delay = ns_to_ticks(ns);
    }
  }

  el.view_names.push_back("all");
  for (const RouteView& v : graph.views) {
    if (v.name == "all" || std::find(el.view_names.begin(), el.view_names.end(), v.name) != el.view_names.end())
      throw ConfigError(graph.source + ": routing view '" + v.name + "' is declared twice");
    el.view_names.push_back(v.name);
  }
  if (el.view_names.size() > 32) throw ConfigError(graph.source + ": at most 31 routing views besides 'all'");
  el.attrs = graph.attrs;

  el.metric = graph.route_metric;
  std::vector<Link> by_edge;  // the links in edge order, put in port order below
  by_edge.reserve(graph.edges.size());
  std::vector<std::uint32_t> out_ports(el.nodes.size()), in_ports(el.nodes.size());  // per node, so far
  std::vector<Tick> route_nm;  // per edge: route_mm in nm (RouteMetric::kDistance only; in the steps below)
  std::vector<std::uint32_t> exclude_views;  // per edge: bit v set when routing view v may not use it (the same)
  for (const EdgeSpec& e : graph.edges) {
    // Where an error about the edge points: the line that wrote it; for an edge a front-end generated, the file it
    // made it from (the front-end checked the values it was given, each at its own place).
    auto at = [&] {  // (only for an error: it builds text)
      return e.generated ? e.origin + " (an edge " + e.src + " -> " + e.dst + " its front-end made)" : e.origin;
    };
    const NodeIndex src = el.find_node(e.src);
    const NodeIndex dst = el.find_node(e.dst);
    if (src == kNoNode) throw ConfigError(at() + ": edge from unknown node '" + e.src + "'");
    if (dst == kNoNode) throw ConfigError(at() + ": edge to unknown node '" + e.dst + "'");
    if (!(e.bandwidth_gbs >= 0.0)) throw ConfigError(at() + ": bandwidth_gbs must be >= 0");
    if (!(e.latency_ns >= 0.0)) throw ConfigError(at() + ": latency must be >= 0");
    if (e.latency_ns > kMaxTimeNs)
      throw ConfigError(at() + ": latency " + format_ns(e.latency_ns) +
                        " ns is beyond the simulatable range (at most 1e15 ns)");
    if (e.bandwidth_gbs > 0 && e.bandwidth_gbs < kMinBandwidthGbs)
      throw ConfigError(at() + ": bandwidth_gbs " + format_number(e.bandwidth_gbs) +
                        " is too small to simulate (0 means unlimited; otherwise at least 1e-6)");
    if (e.flit_bytes == 0) throw ConfigError(at() + ": flit_bytes must be > 0");
    const Node& s = el.nodes[src];
    const Node& d = el.nodes[dst];
    for (const NodeIndex end_index : {src, dst}) {
      const Node& end = el.nodes[end_index];
      if (accepts(end.type->info, e.kind)) continue;
      const std::string why = end.id + " has no '" + e.kind + "' port" + suggest(e.kind, port_labels(end.type->info));
      // Name first what the user changed: the end's implementation when it came from the command line, or when the
      // edge was generated (the user wrote no such edge); else the edge as written.
      const std::string& chosen = graph.nodes[end_index].origin;
      if (!e.generated && chosen.rfind("--set ", 0) != 0)
        throw ConfigError(e.origin + ": edge " + s.id + " (" + s.impl + ") -> " + d.id + " (" + d.impl + ") of kind '" +
                          e.kind + "': " + why + registry.mapping_note(end.impl));
      const bool out = end_index == src;
      throw ConfigError(chosen + ": " + end.impl + " does not fit here: " + why + ", which its " +
                        (out ? "edge to " + d.id : "edge from " + s.id) + " needs (" +
                        (e.generated ? "made by the topology front-end from " : "") + e.origin + ")" +
                        registry.mapping_note(end.impl));
    }
    Link l;
    l.src = src;
    l.dst = dst;
    l.dst_port = static_cast<PortIndex>(in_ports[dst]++);
    l.dst_flit_aware = d.type->info.flit_aware;
    l.dst_trains = d.type->info.flit_aware && d.type->info.trains;
    l.accepts = accepts_of(el, accepts_index, d.type->info, e.kind);
    l.latency = ns_to_ticks(e.latency_ns);
    l.bandwidth_gbs = e.bandwidth_gbs;
    l.flit_bytes = e.flit_bytes;
    l.ser_full = serialization_ticks(e.flit_bytes, e.bandwidth_gbs);
    std::uint32_t& excluded = exclude_views.emplace_back(0);
    for (std::size_t v = 0; v < graph.views.size(); ++v) {
      const auto& ex = graph.views[v].exclude_kinds;
      if (std::find(ex.begin(), ex.end(), e.kind) != ex.end()) excluded |= 1u << (v + 1);
    }
    if (el.metric == RouteMetric::kDistance) {
      if (!(e.route_mm >= 0.0) || e.route_mm > 1e9) throw ConfigError(e.origin + ": route_mm must be in [0, 1e9]");
      route_nm.push_back(static_cast<Tick>(std::llround(e.route_mm * 1e6)));
    }
    ++out_ports[src];
    by_edge.push_back(l);
  }
  if (el.metric == RouteMetric::kDistance) {
    std::vector<NodeIndex> order(el.nodes.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<NodeIndex>(i);
    std::sort(order.begin(), order.end(), [&](NodeIndex a, NodeIndex b) { return el.nodes[a].id < el.nodes[b].id; });
    el.id_order.resize(el.nodes.size());
    for (std::size_t k = 0; k < order.size(); ++k) el.id_order[order[k]] = static_cast<NodeIndex>(k);
    el.by_order = std::move(order);
  }
  // Links in port order: out-port p of node n is link port_begin[n] + p (and a system's wire of the same index). A
  // node's out-ports, and its in-ports, are its edges in the graph's order.
  el.port_begin.resize(el.nodes.size() + 1);
  for (std::size_t n = 0; n < el.nodes.size(); ++n) {
    el.port_begin[n + 1] = el.port_begin[n] + out_ports[n];
    el.nodes[n].out.reserve(out_ports[n]);
    el.nodes[n].in.reserve(in_ports[n]);
  }
  el.links.resize(by_edge.size());
  el.link_kinds.resize(by_edge.size());
  el.steps.resize(by_edge.size());
  el.edge_links.resize(by_edge.size());
  std::vector<std::uint32_t>& next_port = out_ports;  // per node: the link its next out-port is
  std::copy(el.port_begin.begin(), el.port_begin.end() - 1, next_port.begin());
  for (std::size_t ei = 0; ei < by_edge.size(); ++ei) {
    const Link& l = by_edge[ei];
    const std::uint32_t li = next_port[l.src]++;
    el.edge_links[ei] = li;
    el.links[li] = l;
    el.link_kinds[li] = graph.edges[ei].kind;
    el.steps[li] = {l.dst, exclude_views[ei],
                    el.metric == RouteMetric::kDistance ? route_nm[ei] : l.latency + l.ser_full};
    // Ports view the elaboration's own kinds and ids, which stay where they are, not the graph's.
    el.nodes[l.src].out.push_back({el.link_kinds[li], el.nodes[l.dst].id, l.dst});
    el.nodes[l.dst].in.push_back({el.link_kinds[li], el.nodes[l.src].id, l.src});
  }

  // Node references (kNode parameters) resolve now, so a component never looks a collaborator up by name.
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < el.nodes.size(); ++i) {
    Node& n = el.nodes[i];
    for (ParamEntry& e : n.params.entries()) {
      if (!e.node_ref) continue;
      const std::string& target = std::get<std::string>(e.value);
      if (target.empty()) continue;
      const NodeIndex target_node = el.find_node(target);
      if (target_node == kNoNode && e.origin == "default") continue;  // a default that names no node here: none
      if (target_node == kNoNode) {
        if (ids.empty())
          for (const Node& m : el.nodes) ids.push_back(m.id);
        throw ConfigError(e.origin + ": parameter '" + e.name + "' of " + n.id + " (" + n.impl +
                          ") names unknown node '" + target + "'" + suggest(target, ids));
      }
      e.node = target_node;
    }
  }
  el.stat_begin.reserve(el.nodes.size() + 1);
  for (const Elaboration::Node& n : el.nodes) {
    el.stat_begin.push_back(el.stat_count);
    el.stat_count += static_cast<std::uint32_t>(n.type->info.stats.size());
  }
  el.stat_begin.push_back(el.stat_count);
  return made;
}

}  // namespace kbsim::core
