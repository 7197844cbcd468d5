#include "component/simulation.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <queue>

#include "component/crash.hpp"
#include "kbsim/text.hpp"
#include "kbsim/waiting.hpp"
#include "plugin/params_resolve.hpp"
#include "plugin/registry.hpp"
#include "sim/watch.hpp"

namespace kbsim::core {

Simulation::Simulation(std::shared_ptr<const Elaboration> elaboration, const Registry& registry,
                       std::shared_ptr<RouteTable> routes, const MakeExecutor& executor)
    : el_(std::move(elaboration)),
      nodes_(el_->nodes),
      ids_(el_->ids.data()),
      port_begin_(el_->port_begin.data()),
      links_(el_->links),
      stats_(el_->stat_count),
      fresh_roots_(nodes_.size(), 0),
      router_(*el_, std::move(routes)),
      registry_(registry) {
  if (nodes_.size() > (std::size_t{1} << kNodeBits))
    throw ConfigError("the graph has " + std::to_string(nodes_.size()) + " nodes; a system holds at most " +
                      std::to_string(std::size_t{1} << kNodeBits));
  exec_ = executor ? executor(*this) : std::make_unique<LocalExecutor>(*this);
  // The wires first, so a constructor may already ask for routes; their receivers once those exist.
  wires_.resize(links_.size());
  loads_.resize(wires_.size());
  for (std::size_t p = 0; p < wires_.size(); ++p) {
    Wire& w = wires_[p];
    const Link& l = links_[p];
    w.latency = l.latency;
    w.dst_port = l.dst_port;
    w.plain = !l.dst_flit_aware && l.accepts == 0;
  }
  components_.resize(nodes_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    ComponentContext ctx = context(static_cast<NodeIndex>(i));
    if (!exec_->runs(static_cast<NodeIndex>(i))) ctx.sim = exec_->elsewhere();  // what it does is its part's
    crash::guarded(*this, static_cast<NodeIndex>(i), "construction",
                   [&] { components_[i].reset(nodes_[i].type->create(ctx)); });
  }
  // KBSIM_FLIT_BY_FLIT=1: every flit its own event (docs/architecture.md, "Flit trains advanced as a whole").
  const char* flat = std::getenv("KBSIM_FLIT_BY_FLIT");
  trains_on_ = !(flat && std::string_view(flat) == "1");
  for (Wire& w : wires_) {
    const NodeIndex dst = link_of(w).dst;
    w.dst = exec_->runs(dst) ? components_[dst].get() : nullptr;  // another part's: through Executor::send_away
    if (!w.dst) w.plain = 0;
    if (!w.dst) trains_on_ = false;  // (a train's flits would cross to another part one by one)
  }
  // Every component is built and set up (routes need every node's transit cost, and the bench may call any through
  // its interface). An executor of several parts may hold an error, to end every part together.
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    try {
      crash::guarded(*this, static_cast<NodeIndex>(i), "setup", [&] { components_[i]->setup(); });
    } catch (const Error& e) {
      if (!exec_->runs(static_cast<NodeIndex>(i))) continue;  // another part's: that part says so
      if (!exec_->hold(e)) throw;
      break;
    }
  }
}

Simulation::~Simulation() {
  // Components go first (and the trains' records, which hold messages too): they may hold messages whose pools
  // live in plugins.
  trains_.clear();
  for (auto& c : components_) c.reset();
  // Then services, newest first (a service may use those made before it).
  services_.clear();
}

void Simulation::release() {
  if (released_) return;
  for (std::uint32_t p = 0; p < wires_.size(); ++p)
    if (const Traffic t = traffic(p); t.messages != 0 || t.bytes != 0) kept_traffic_.push_back({p, t});
  // As the destructor does: components first (they may hold messages whose pools live in plugins), then services.
  trains_.clear();
  for (auto& c : components_) c.reset();
  std::vector<std::unique_ptr<Component>>().swap(components_);
  services_.clear();
  engine_.release();
  std::vector<Wire>().swap(wires_);
  std::vector<Load>().swap(loads_);
  std::vector<std::uint32_t>().swap(fresh_roots_);
  released_ = true;
}

Traffic Simulation::traffic(std::uint32_t link) const noexcept {
  if (released_) {
    auto it = std::lower_bound(kept_traffic_.begin(), kept_traffic_.end(), link,
                               [](const auto& k, std::uint32_t l) { return k.first < l; });
    return it != kept_traffic_.end() && it->first == link ? it->second : Traffic{};
  }
  const Load& l = loads_[link];
  return {wires_[link].messages, l.flits, l.bytes, l.busy};
}

void no_port(const Simulation& s, NodeIndex from, PortIndex out) {
  const std::vector<std::uint32_t>& begin = s.elaboration()->port_begin;
  fail_at(s, from,
          "send on out-port " + std::to_string(out) + " but it has " + std::to_string(begin[from + 1] - begin[from]));
}

void fail_at(const Simulation& s, NodeIndex node, const std::string& what) {
  throw SimError("t=" + format_ns(ticks_to_ns(s.now())) + " ns: " + std::string(s.node_id(node)) + ": " + what);
}

void check_type(const Simulation& s, const Link& link, const Message& msg) {
  const Elaboration& el = *s.elaboration();
  const std::vector<TypeId>& ids = el.accepts[link.accepts - 1];
  if (std::find(ids.begin(), ids.end(), msg.type()) != ids.end()) return;
  std::string got;
  char hex[24];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(msg.type()));
  got = std::string("a message of type id ") + hex;
  for (const auto& names : el.accepts_names)
    for (const std::string& n : names)
      if (type_id(n) == msg.type()) got = "a " + n;
  fail_at(s, link.dst,
          "is sent " + got + " by " + el.nodes[link.src].id + " (" + el.nodes[link.src].impl + ") on its '" +
              el.link_kinds[static_cast<std::size_t>(&link - el.links.data())] + "' port, which accepts only " +
              join(el.accepts_names[link.accepts - 1]));
}

std::uint32_t Simulation::fresh_root(NodeIndex from) {
  exec_->outside_handler(from);                                           // (the bench, or a component's setup)
  return static_cast<std::uint32_t>(from) * 256u + fresh_roots_[from]++;  // (wraps: only ties, still deterministic)
}

[[gnu::always_inline]] inline Event& Simulation::untied_event(Tick at, std::uint8_t priority, EventKind kind,
                                                              Component* to, NodeIndex from, EventId* id) {
  // (a time past 2^64 ps wraps into the past: an error there)
  Event& ev = engine_.schedule(at, priority, order_for(at, from), id);
  ev.target = this;
  ev.set_kind(kind);
  ev.hint = to;
  return ev;
}

[[gnu::always_inline]] inline Event& Simulation::new_event(Tick at, std::uint8_t priority, EventKind kind,
                                                           Component* to, NodeIndex from, EventId* id) {
  if (placing_) [[unlikely]]
    return tied_event(at, priority, kind, to, from, id);
  return untied_event(at, priority, kind, to, from, id);
}

Event& Simulation::tied_event(Tick at, std::uint8_t priority, EventKind kind, Component* to, NodeIndex from,
                              EventId* id) {
  EventId mine;
  Event& ev = untied_event(at, priority, kind, to, from, &mine);
  if (id) *id = mine;
  exec_->tie(mine.slot, from);
  return ev;
}

void Simulation::deliver(const Wire& wire, const Link& link, Ref<Message> msg, std::uint32_t hop, Link::Shape shape,
                         Tick start) {
  if (link.accepts) [[unlikely]]
    check_type(*this, link, *msg);
  if (!wire.dst) [[unlikely]] {
    exec_->send_away(link, std::move(msg), hop, shape, start);
    return;
  }
  if (link.dst_flit_aware) {
    if (link.dst_trains && shape.count > 1 && send_train(wire, link, msg, hop, shape, start)) return;
    // The first flit of a train; the event re-arms itself for the others.
    Event& ev = new_event(start + link.first_ser(shape) + link.latency, 128, EventKind::kFlit, wire.dst, link.src);
    ev.take(std::move(msg));
    ev.port = link.dst_port;
    ev.index = 0;
    ev.count = shape.count;
    ev.bytes = shape.count > 1 ? link.flit_bytes : shape.last_bytes;
    ev.hop = hop;
    ev.last_bytes = shape.last_bytes;
    ev.train_start = start + link.latency;
    ev.link = static_cast<std::uint32_t>(&link - links_.data());
    ev.train = shape.count > 1;
  } else {
    Event& ev = new_event(start + link.whole_ser(shape) + link.latency, 128, EventKind::kMessage, wire.dst, link.src);
    ev.take(std::move(msg));
    ev.port = link.dst_port;
  }
}

void Simulation::send(NodeIndex from, PortIndex out, Ref<Message> msg, Tick at) {
  if (!msg) [[unlikely]]
    fail_at(*this, from, "send of an empty message reference");
  if (at < engine_.now()) [[unlikely]]
    fail_at(*this, from, "sends a message at a time in the past");
  if (at == kNever) [[unlikely]]
    fail_at(*this, from, "sends a message beyond the simulatable time (the 64-bit picosecond clock runs out)");
  Wire& wire = out_wire(from, out);
  if (msg->bytes == 0 && wire.plain && !oplog_) [[likely]] {
    // The hot path: a control message to a component that takes whole messages touches this wire only.
    msg->stamp_sender(&ids_[from]);
    ++wire.messages;
    Event& ev = untied_event(at + wire.latency, 128, EventKind::kMessage, wire.dst, from);  // (placing_: oplog_ is set)
    ev.take(std::move(msg));
    ev.port = wire.dst_port;
    return;
  }
  send_general(wire, from, std::move(msg), at);
}

void Simulation::send_general(Wire& wire, NodeIndex from, Ref<Message> msg, Tick at) {
  const Link& link = link_of(wire);
  // (a multiplication, not a division: this is the send path of every message)
  if (msg->bytes >= std::uint64_t{link.flit_bytes} * std::numeric_limits<std::uint32_t>::max()) [[unlikely]]
    fail_at(*this, from,
            "sends a message of " + std::to_string(msg->bytes) + " bytes: more flits of " +
                std::to_string(link.flit_bytes) + " bytes than a message may have (2^32 - 1)");
  if (oplog_ && msg->data_op()) oplog_->end(from, *msg, at);
  msg->stamp_sender(&ids_[from]);
  ++wire.messages;
  Link::Shape shape = link.shape(msg->bytes);
  Tick start = load_of(wire).reserve(link, at, shape);
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
  if (at < engine_.now()) fail_at(*this, from, "forwards a flit at a time in the past");
  Wire& wire = out_wire(from, out);
  Load& load = load_of(wire);
  const Link& link = link_of(wire);
  if (link.accepts && flit.first()) [[unlikely]]
    check_type(*this, link, *flit.msg);
  Tick start = load.reserve(link, at, {1, flit.bytes});
  if (flit.last()) ++wire.messages;
  Tick arrive = start + link.ser(flit.bytes) + link.latency;
  if (!wire.dst) [[unlikely]] {
    exec_->forward_away(link, flit, arrive);
  } else if (link.dst_flit_aware) {
    Event& ev = new_event(arrive, 128, EventKind::kFlit, wire.dst, from);
    ev.take(Ref<Message>(flit.msg));
    ev.port = link.dst_port;
    ev.index = flit.index;
    ev.count = flit.count;
    ev.bytes = flit.bytes;
    ev.hop = flit.hop + 1;  // (no train: new_event cleared the flag with the kind)
  } else if (flit.last()) {
    // Earlier flits only occupied the link; the receiver sees the whole message.
    Event& ev = new_event(arrive, 128, EventKind::kMessage, wire.dst, from);
    ev.take(Ref<Message>(flit.msg));
    ev.port = link.dst_port;
  }
}

EventId Simulation::schedule(NodeIndex self, Tick at, std::uint64_t tag, Ref<Message> msg, std::uint8_t priority) {
  if (at < engine_.now()) fail_at(*this, self, "schedules a timer in the past");
  if (at == kNever) [[unlikely]]
    fail_at(*this, self, "schedules a timer beyond the simulatable time (the 64-bit picosecond clock runs out)");
  EventId id;
  Event& ev = new_event(at, priority, EventKind::kTimer, components_[self].get(), self, &id);
  ev.tag = tag;
  ev.take(std::move(msg));
  return id;
}

[[gnu::always_inline]] inline Tick Simulation::on_event(Event& ev) {
  Component& c = *static_cast<Component*>(const_cast<void*>(ev.hint));
  crash::g_node = c.index();
  try {
    return dispatch(c, ev);
  } catch (const SimError& e) {
    if (std::string_view(e.what()).substr(0, 2) == "t=") throw;  // already names the time and component
    fail_at(*this, c.index(), e.what());
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    fail_at(*this, c.index(),
            std::string("component fault (") + crash::library_of(*this, c.index()) + "): " + e.what());
  } catch (...) {
    fail_at(*this, c.index(),
            std::string("component fault (") + crash::library_of(*this, c.index()) +
                "): it threw something that is not a std::exception");
  }
}

[[gnu::always_inline]] inline Tick Simulation::dispatch(Component& c, Event& ev) {
  switch (ev.kind()) {
    case EventKind::kTimer: c.on_timer(ev.tag, std::move(ev.msg)); return kNever;
    case EventKind::kMessage:
      if (oplog_ && ev.msg->data_op()) oplog_->start(c.index(), nodes_[c.index()].id, *ev.msg, engine_.now());
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
    case EventKind::kTrain: return on_train_event(c, ev);
  }
  return kNever;
}

bool Simulation::run_events(Tick t, bool advance) {
  // The event loop, with on_event inlined into it; an executor that places records notes each event's place.
  if (placing_)
    return engine_.run_until(t, this, advance, [this](std::uint32_t priority) { exec_->place_event(priority); });
  return engine_.run_until(t, this, advance);
}

void Simulation::set_op_log(OpLog* log) {
  oplog_ = log;
  placing_ = exec_->set_op_log(log);
  if (placing_) trains_on_ = false;  // (an executor that notes each event's place notes each flit's)
}

void Simulation::request_stop() noexcept {
  if (!engine_.dispatching() && exec_->stop_outside_run()) return;
  engine_.stop();
}

NodeIndex Simulation::find_node(std::string_view id) const {
  const NodeIndex n = el_->find_node(id);
  if (n == kNoNode) throw ConfigError("unknown node '" + std::string(id) + "'");
  return n;
}

Stat& Simulation::stat(NodeIndex self, std::string_view name) {
  const ComponentInfo& info = nodes_[self].type->info;
  if (const std::size_t i = stat_index(info, name); i < info.stats.size()) return stats_[el_->stat_begin[self] + i];
  throw Error(nodes_[self].impl + ": statistic '" + std::string(name) + "' is not declared in the component's info");
}

void Simulation::log(NodeIndex self, LogLevel level, std::string_view text) {
  static constexpr spdlog::level::level_enum kLevels[] = {spdlog::level::debug, spdlog::level::info,
                                                          spdlog::level::warn, spdlog::level::err};
  spdlog::log(kLevels[static_cast<int>(level)], "t={} ns {}: {}", format_ns(ticks_to_ns(now())), nodes_[self].id, text);
}

}  // namespace kbsim::core
