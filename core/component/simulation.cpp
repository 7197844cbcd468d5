#include "component/simulation.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <queue>

#include "component/crash.hpp"
#include "kbsim/text.hpp"
#include "plugin/params_resolve.hpp"
#include "plugin/registry.hpp"
#include "sim/watch.hpp"

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
}  // namespace

namespace {
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
}  // namespace

Simulation::Simulation(const Graph& graph, const Registry& registry) : registry_(registry) {
  if (graph.nodes.size() >= (std::size_t{1} << 28))
    throw ConfigError(graph.source + ": " + std::to_string(graph.nodes.size()) + " nodes; at most 2^28 are supported");
  if (graph.edges.size() >= (std::size_t{1} << 29))
    throw ConfigError(graph.source + ": " + std::to_string(graph.edges.size()) + " edges; at most 2^29 are supported");
  nodes_.resize(graph.nodes.size());
  index_.reserve(graph.nodes.size());
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const NodeSpec& spec = graph.nodes[i];
    Node& n = nodes_[i];
    n.id = spec.id;
    n.impl = spec.impl;
    if (n.id.empty()) throw ConfigError(spec.origin + ": node without an id");
    check_id(n.id, spec.origin);
    auto [it, fresh] = index_.emplace(n.id, static_cast<NodeIndex>(i));
    if (!fresh)
      throw ConfigError(spec.origin + ": duplicate node id '" + n.id + "' (first at " + graph.nodes[it->second].origin +
                        ")");
    n.type = &registry.component_for_impl(spec.impl, spec.origin);
    auto lib = registry.impls().find(spec.impl);
    n.library = lib == registry.impls().end() ? "?" : lib->second.library;
    n.params = resolve_params(n.type->info.params, spec.params, spec.impl, spec.origin);
    n.stats.resize(n.type->info.stats.size());
  }

  view_names_.push_back("all");
  for (const RouteView& v : graph.views) {
    if (v.name == "all" || std::find(view_names_.begin(), view_names_.end(), v.name) != view_names_.end())
      throw ConfigError(graph.source + ": routing view '" + v.name + "' is declared twice");
    view_names_.push_back(v.name);
  }
  if (view_names_.size() > 32) throw ConfigError(graph.source + ": at most 31 routing views besides 'all'");
  attrs_ = graph.attrs;

  links_.reserve(graph.edges.size());
  link_kinds_.reserve(graph.edges.size());
  metric_ = graph.route_metric;
  std::vector<std::vector<std::uint32_t>> out_links(nodes_.size());  // flattened below
  for (const EdgeSpec& e : graph.edges) {
    auto src = index_.find(e.src);
    auto dst = index_.find(e.dst);
    if (src == index_.end()) throw ConfigError(e.origin + ": edge from unknown node '" + e.src + "'");
    if (dst == index_.end()) throw ConfigError(e.origin + ": edge to unknown node '" + e.dst + "'");
    if (!(e.bandwidth_gbs >= 0.0)) throw ConfigError(e.origin + ": bandwidth_gbs must be >= 0");
    if (!(e.latency_ns >= 0.0)) throw ConfigError(e.origin + ": latency must be >= 0");
    if (e.latency_ns > kMaxTimeNs)
      throw ConfigError(e.origin + ": latency " + format_ns(e.latency_ns) +
                        " ns is beyond the simulatable range (at most 1e15 ns)");
    if (e.bandwidth_gbs > 0 && e.bandwidth_gbs < kMinBandwidthGbs)
      throw ConfigError(e.origin + ": bandwidth_gbs " + std::to_string(e.bandwidth_gbs) +
                        " is too small to simulate (0 means unlimited; otherwise at least 1e-6)");
    if (e.flit_bytes == 0) throw ConfigError(e.origin + ": flit_bytes must be > 0");
    Node& s = nodes_[src->second];
    Node& d = nodes_[dst->second];
    for (const Node* end : {&s, &d})
      if (!accepts(end->type->info, e.kind))
        throw ConfigError(e.origin + ": edge " + s.id + " (" + s.impl + ") -> " + d.id + " (" + d.impl + ") of kind '" +
                          e.kind + "': " + end->id + " has no '" + e.kind + "' port" +
                          suggest(e.kind, port_labels(end->type->info)));
    Link l;
    l.src = src->second;
    l.dst = dst->second;
    l.dst_port = static_cast<PortIndex>(d.in.size());
    l.dst_flit_aware = d.type->info.flit_aware;
    l.accepts = accepts_of(d.type->info, e.kind);
    l.latency = ns_to_ticks(e.latency_ns);
    l.bandwidth_gbs = e.bandwidth_gbs;
    l.flit_bytes = e.flit_bytes;
    l.ser_full = serialization_ticks(e.flit_bytes, e.bandwidth_gbs);
    for (std::size_t v = 0; v < graph.views.size(); ++v) {
      const auto& ex = graph.views[v].exclude_kinds;
      if (std::find(ex.begin(), ex.end(), e.kind) != ex.end()) l.exclude_views |= 1u << (v + 1);
    }
    link_kinds_.push_back(e.kind);
    if (metric_ == RouteMetric::kDistance) {
      if (!(e.route_mm >= 0.0) || e.route_mm > 1e9) throw ConfigError(e.origin + ": route_mm must be in [0, 1e9]");
      route_nm_.push_back(static_cast<Tick>(std::llround(e.route_mm * 1e6)));
    }
    out_links[src->second].push_back(static_cast<std::uint32_t>(links_.size()));
    links_.push_back(l);
    s.out.push_back({e.kind, {}, dst->second});
    d.in.push_back({e.kind, {}, src->second});
  }
  if (metric_ == RouteMetric::kDistance) {
    std::vector<NodeIndex> order(nodes_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<NodeIndex>(i);
    std::sort(order.begin(), order.end(), [&](NodeIndex a, NodeIndex b) { return nodes_[a].id < nodes_[b].id; });
    id_rank_.resize(nodes_.size());
    for (std::size_t k = 0; k < order.size(); ++k) id_rank_[order[k]] = static_cast<NodeIndex>(k);
    by_rank_ = std::move(order);
  }
  port_begin_.reserve(nodes_.size() + 1);
  wires_.reserve(links_.size());
  for (const auto& links : out_links) {
    port_begin_.push_back(static_cast<std::uint32_t>(wires_.size()));
    for (std::uint32_t li : links) {
      Link& l = links_[li];
      l.wire = static_cast<std::uint32_t>(wires_.size());
      Wire& w = wires_.emplace_back();
      w.latency = l.latency;
      w.link = li;
      w.dst_port = l.dst_port;
      w.plain = !l.dst_flit_aware && l.accepts == 0;
    }
  }
  port_begin_.push_back(static_cast<std::uint32_t>(wires_.size()));
  for (Node& n : nodes_) {
    for (Port& p : n.out) p.peer = nodes_[p.peer_index].id;
    for (Port& p : n.in) p.peer = nodes_[p.peer_index].id;
  }

  // Node references (kNode parameters) resolve now, so a component never looks a collaborator up by name.
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    Node& n = nodes_[i];
    for (ParamEntry& e : n.params.entries()) {
      if (!e.node_ref) continue;
      const std::string& target = std::get<std::string>(e.value);
      if (target.empty()) continue;
      auto it = index_.find(target);
      if (it == index_.end() && e.origin == "default") continue;  // a default that names no node here: none
      if (it == index_.end()) {
        if (ids.empty())
          for (const Node& m : nodes_) ids.push_back(m.id);
        throw ConfigError(e.origin + ": parameter '" + e.name + "' of " + n.id + " (" + n.impl +
                          ") names unknown node '" + target + "'" + suggest(target, ids));
      }
      e.node = it->second;
    }
  }

  components_.reserve(nodes_.size());
  ids_.reserve(nodes_.size());
  for (const Node& n : nodes_) ids_.push_back(n.id);
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    Node& n = nodes_[i];
    ComponentContext ctx{n.id, n.impl, static_cast<NodeIndex>(i), &n.params, n.in, n.out, this, engine_.clock()};
    guard(n, "construction", [&] { n.component.reset(n.type->create(ctx)); });
    components_.push_back(n.component.get());
  }
  for (Wire& w : wires_) w.dst = components_[links_[w.link].dst];
  for (Node& n : nodes_) guard(n, "setup", [&] { n.component->setup(); });
}

template <class F>
void Simulation::guard(const Node& n, const char* stage, F&& f) const {
  try {
    f();
  } catch (const Error&) {
    throw;  // a configuration or simulation error the component raised on purpose: already one line
  } catch (const std::exception& e) {
    plugin_fault(n, stage, e.what());
  } catch (...) {
    plugin_fault(n, stage, "it threw something that is not a std::exception");
  }
}

void Simulation::plugin_fault(const Node& n, const char* stage, const std::string& what) const {
  throw PluginError("t=" + format_ns(ticks_to_ns(now())) + " ns: " + n.id + " (" + library_of(n) + "): " + stage +
                    " failed: " + what);
}

Simulation::~Simulation() {
  // Components go first: they may hold messages whose pools live in plugins.
  for (Node& n : nodes_) n.component.reset();
  // Then services, newest first (a service may use those made before it).
  while (!owned_services_.empty()) owned_services_.pop_back();
}

void Simulation::finish() {
  if (finished_) return;
  finished_ = true;
  for (Node& n : nodes_) guard(n, "finish", [&] { n.component->finish(); });
}

void Simulation::no_port(NodeIndex from, PortIndex out) const {
  fail(from, "send on out-port " + std::to_string(out) + " but it has " +
                 std::to_string(port_begin_[from + 1] - port_begin_[from]));
}

Event& Simulation::new_event(Tick at, std::uint8_t priority, EventKind kind, Component* to, EventId* id) {
  Event& ev = engine_.schedule(at, priority, id);
  ev.target = this;
  ev.set_kind(kind);
  ev.hint = to;
  return ev;
}

std::uint16_t Simulation::accepts_of(const ComponentInfo& info, const std::string& kind) {
  const PortSpec* spec = nullptr;
  for (const PortSpec& p : info.ports)
    if (p.label == kind || (!spec && p.label == "*")) spec = &p;
  if (!spec || spec->messages.empty()) return 0;
  for (const auto& [s, index] : accepts_index_)
    if (s == spec) return index;
  std::vector<TypeId> ids;
  for (const std::string& name : spec->messages) ids.push_back(type_id(name));
  accepts_.push_back(std::move(ids));
  accepts_names_.push_back(spec->messages);
  if (accepts_.size() > 0xfffe) throw ConfigError("too many distinct port declarations with message types");
  auto index = static_cast<std::uint16_t>(accepts_.size());
  accepts_index_.emplace_back(spec, index);
  return index;
}

void Simulation::check_type(const Link& link, const Message& msg) const {
  const std::vector<TypeId>& ids = accepts_[link.accepts - 1];
  if (std::find(ids.begin(), ids.end(), msg.type()) != ids.end()) return;
  std::string got;
  char hex[24];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(msg.type()));
  got = std::string("a message of type id ") + hex;
  for (const auto& names : accepts_names_)
    for (const std::string& n : names)
      if (type_id(n) == msg.type()) got = "a " + n;
  fail(link.dst, "is sent " + got + " by " + nodes_[link.src].id + " (" + nodes_[link.src].impl + ") on its '" +
                     link_kinds_[static_cast<std::size_t>(&link - links_.data())] + "' port, which accepts only " +
                     join(accepts_names_[link.accepts - 1]));
}

void Simulation::deliver(const Wire& wire, const Link& link, Ref<Message> msg, std::uint32_t hop, Link::Shape shape,
                         Tick start) {
  if (link.accepts) [[unlikely]]
    check_type(link, *msg);
  if (link.dst_flit_aware) {
    // The first flit of a train; the event re-arms itself for the others.
    Tick first_ser = shape.count > 1 ? link.ser_full : link.ser(shape.last_bytes);
    Event& ev = new_event(start + first_ser + link.latency, 128, EventKind::kFlit, wire.dst);
    ev.msg = std::move(msg);
    ev.port = link.dst_port;
    ev.index = 0;
    ev.count = shape.count;
    ev.bytes = shape.count > 1 ? link.flit_bytes : shape.last_bytes;
    ev.hop = hop;
    ev.last_bytes = shape.last_bytes;
    ev.train_start = start + link.latency;
    ev.link = wire.link;
    ev.train = shape.count > 1;
  } else {
    Tick total = shape.last_bytes == 0 ? 0 : Tick{shape.count - 1} * link.ser_full + link.ser(shape.last_bytes);
    Event& ev = new_event(start + total + link.latency, 128, EventKind::kMessage, wire.dst);
    ev.msg = std::move(msg);
    ev.port = link.dst_port;
  }
}

void Simulation::send(NodeIndex from, PortIndex out, Ref<Message> msg, Tick at) {
  if (!msg) [[unlikely]]
    fail(from, "send of an empty message reference");
  if (at < now()) [[unlikely]]
    fail(from, "sends a message at a time in the past");
  if (at == kNever) [[unlikely]]
    fail(from, "sends a message beyond the simulatable time (the 64-bit picosecond clock runs out)");
  Wire& wire = out_wire(from, out);
  if (msg->bytes == 0 && wire.plain && !oplog_) [[likely]] {
    // The hot path: a control message to a component that takes whole messages touches this wire only.
    msg->stamp_sender(ids_[from]);
    ++wire.messages;
    Event& ev = new_event(at + wire.latency, 128, EventKind::kMessage, wire.dst);
    ev.msg = std::move(msg);
    ev.port = wire.dst_port;
    return;
  }
  send_general(wire, from, std::move(msg), at);
}

void Simulation::send_general(Wire& wire, NodeIndex from, Ref<Message> msg, Tick at) {
  Link& link = links_[wire.link];
  // (a multiplication, not a division: this is the send path of every message)
  if (msg->bytes >= std::uint64_t{link.flit_bytes} * std::numeric_limits<std::uint32_t>::max()) [[unlikely]]
    fail(from, "sends a message of " + std::to_string(msg->bytes) + " bytes: more flits of " +
                   std::to_string(link.flit_bytes) + " bytes than a message may have (2^32 - 1)");
  if (oplog_ && msg->data_op()) oplog_->end(from, *msg, at);
  msg->stamp_sender(ids_[from]);
  ++wire.messages;
  Link::Shape shape = link.shape(msg->bytes);
  Tick start = link.reserve(at, shape);
  // Flits count hops along the message's route; a whole message may be sent
  // from anywhere on it (e.g. by a store-and-forward node).
  std::uint32_t hop = 1;
  if (const Route* r = msg->route; r && link.dst_flit_aware)
    for (std::uint32_t k = 0; k < r->ports.size(); ++k)
      if (r->nodes[k] == from) {
        hop = k + 1;
        break;
      }
  deliver(wire, link, std::move(msg), hop, shape, start);
}

void Simulation::forward(NodeIndex from, PortIndex out, const Flit& flit, Tick at) {
  if (at < now()) fail(from, "forwards a flit at a time in the past");
  Wire& wire = out_wire(from, out);
  Link& link = links_[wire.link];
  if (link.accepts && flit.first()) [[unlikely]]
    check_type(link, *flit.msg);
  Tick start = link.reserve(at, {1, flit.bytes});
  if (flit.last()) ++wire.messages;
  Tick arrive = start + link.ser(flit.bytes) + link.latency;
  if (link.dst_flit_aware) {
    Event& ev = new_event(arrive, 128, EventKind::kFlit, wire.dst);
    ev.msg = Ref<Message>(flit.msg);
    ev.port = link.dst_port;
    ev.index = flit.index;
    ev.count = flit.count;
    ev.bytes = flit.bytes;
    ev.hop = flit.hop + 1;
    ev.train = false;
  } else if (flit.last()) {
    // Earlier flits only occupied the link; the receiver sees the whole message.
    Event& ev = new_event(arrive, 128, EventKind::kMessage, wire.dst);
    ev.msg = Ref<Message>(flit.msg);
    ev.port = link.dst_port;
  }
}

EventId Simulation::schedule(NodeIndex self, Tick at, std::uint64_t tag, Ref<Message> msg, std::uint8_t priority) {
  if (at < now()) fail(self, "schedules a timer in the past");
  if (at == kNever) [[unlikely]]
    fail(self, "schedules a timer beyond the simulatable time (the 64-bit picosecond clock runs out)");
  EventId id;
  Event& ev = new_event(at, priority, EventKind::kTimer, components_[self], &id);
  ev.tag = tag;
  ev.msg = std::move(msg);
  return id;
}

Tick Simulation::on_event(Event& ev) {
  Component& c = *static_cast<Component*>(const_cast<void*>(ev.hint));
  crash::g_node = c.index();
  try {
    return dispatch(c, ev);
  } catch (const SimError& e) {
    if (std::string_view(e.what()).substr(0, 2) == "t=") throw;  // already names the time and component
    fail(c.index(), e.what());
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    fail(c.index(), std::string("component fault (") + library_of(nodes_[c.index()]) + "): " + e.what());
  } catch (...) {
    fail(c.index(), std::string("component fault (") + library_of(nodes_[c.index()]) +
                        "): it threw something that is not a std::exception");
  }
}

std::string Simulation::library_of(const Node& n) const { return n.impl + ", library " + n.library; }

Tick Simulation::dispatch(Component& c, Event& ev) {
  switch (ev.kind()) {
    case EventKind::kTimer: c.on_timer(ev.tag, std::move(ev.msg)); return kNever;
    case EventKind::kMessage:
      if (oplog_ && ev.msg->data_op()) oplog_->start(c.index(), nodes_[c.index()].id, *ev.msg, now());
      c.on_message(ev.port, std::move(ev.msg));
      return kNever;
    case EventKind::kFlit: {
      c.on_flit(ev.port, Flit{ev.msg.get(), ev.index, ev.count, ev.bytes, ev.hop});
      if (!ev.train || ev.index + 1 >= ev.count) return kNever;
      ++ev.index;
      bool last = ev.index + 1 == ev.count;
      const Link& link = links_[ev.link];
      if (last) ev.bytes = ev.last_bytes;
      return ev.train_start + Tick{ev.index} * link.ser_full + (last ? link.ser(ev.last_bytes) : link.ser_full);
    }
  }
  return kNever;
}

void Simulation::run_until(Tick t) {
  const Simulation* outer = crash::dispatching();
  crash::set_dispatch(this);
  struct Done {
    const Simulation* outer;
    ~Done() { crash::set_dispatch(outer); }
  } done{outer};
  watch::beat(now(), engine_.events());  // a wall-time budget is checked when a run starts, too
  engine_.run_until(t, this);
  // Stopped from outside (Ctrl-C, SIGTERM, --max-wall): whoever waits for this system's work must not loop on.
  if (watch::stop_requested())
    throw BenchError("INTERRUPTED", "the run was stopped at t=" + format_ns(ticks_to_ns(now())) + " ns");
}

Service* Simulation::find_service(std::string_view name) {
  for (const auto& [n, svc] : services_)
    if (n == name) return svc;
  Service* made = nullptr;
  if (const ServiceType* type = registry_.service(name)) {
    owned_services_.emplace_back(type->create(*this, *this));
    made = owned_services_.back().get();
    if (!made) owned_services_.pop_back();  // the provider declined: not available on this system
  }
  services_.emplace_back(std::string(name), made);
  return made;
}

void Simulation::provide(std::string_view name, Service& service) {
  for (auto& [n, svc] : services_)
    if (n == name) {
      if (svc) throw Error("service '" + std::string(name) + "' is already in use on this system");
      svc = &service;  // asked for before, when nobody provided it
      return;
    }
  services_.emplace_back(std::string(name), &service);
}

std::vector<const Extension*> Simulation::extensions(std::string_view kind) const {
  std::vector<const Extension*> out;
  for (const auto& [name, entry] : registry_.extensions())
    if (entry.ext->kind == kind) out.push_back(entry.ext);
  return out;
}

void Simulation::finish_services() {
  if (services_finished_) return;
  services_finished_ = true;
  // Newest first; a service created while others finish (say, by a component the host runtime's wait runs)
  // finishes too. Indices, not iterators: creating one may grow the vector.
  for (std::size_t finished = 0; finished < owned_services_.size();) {
    const std::size_t n = owned_services_.size();
    for (std::size_t i = n; i-- > finished;) owned_services_[i]->finish();
    finished = n;
  }
}

NodeIndex Simulation::find_node(std::string_view id) const {
  auto it = index_.find(id);
  if (it == index_.end()) throw ConfigError("unknown node '" + std::string(id) + "'");
  return it->second;
}

Stat& Simulation::stat(NodeIndex self, std::string_view name) {
  Node& n = nodes_[self];
  const auto& specs = n.type->info.stats;
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (specs[i].name == name) return n.stats[i];
  throw Error(n.impl + ": statistic '" + std::string(name) + "' is not declared in the component's info");
}

const Stat& Simulation::stat(std::string_view node, std::string_view name) const {
  auto it = index_.find(node);
  if (it == index_.end()) throw SimError("no node '" + std::string(node) + "'");
  const Node& n = nodes_[it->second];
  const auto& specs = n.type->info.stats;
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (specs[i].name == name) return n.stats[i];
  throw SimError(std::string(node) + " has no statistic '" + std::string(name) + "'");
}

void Simulation::log(NodeIndex self, LogLevel level, std::string_view text) {
  static constexpr spdlog::level::level_enum kLevels[] = {spdlog::level::debug, spdlog::level::info,
                                                          spdlog::level::warn, spdlog::level::err};
  spdlog::log(kLevels[static_cast<int>(level)], "t={} ns {}: {}", format_ns(ticks_to_ns(now())), nodes_[self].id, text);
}

void Simulation::fail(NodeIndex node, const std::string& what) const {
  throw SimError("t=" + format_ns(ticks_to_ns(now())) + " ns: " + nodes_[node].id + ": " + what);
}

}  // namespace kbsim::core
