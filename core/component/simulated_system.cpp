#include "component/simulated_system.hpp"

#include "component/crash.hpp"
#include "component/simulation.hpp"
#include "kbsim/text.hpp"
#include "kbsim/waiting.hpp"
#include "plugin/registry.hpp"
#include "sim/watch.hpp"

namespace kbsim::core {

SimulatedSystem::SimulatedSystem(std::unique_ptr<Simulation> sim) : owned_(std::move(sim)), sim_(*owned_) {}
SimulatedSystem::~SimulatedSystem() = default;

void SimulatedSystem::live(const char* call) const {
  if (!sim_.released_) [[likely]]
    return;
  const char* bench = crash::bench();
  throw BenchError("RELEASED", (bench ? "bench '" + std::string(bench) + "'" : std::string("the caller")) + " called " +
                                   call + " on a system it released (BenchContext::release), which " +
                                   "keeps only its results");
}

void SimulatedSystem::release() {
  live("release()");
  sim_.services_.finish();
  finish();
  sim_.release();
}

void SimulatedSystem::run_until(Tick t) {
  live("run_until()");
  const Simulation* outer = crash::dispatching();
  crash::set_dispatch(&sim_);
  struct Done {
    const Simulation* outer;
    ~Done() { crash::set_dispatch(outer); }
  } done{outer};
  watch::beat(now(), sim_.engine_.events());  // a wall-time budget is checked when a run starts, too
  sim_.exec_->run_until(t);
  // Stopped from outside (Ctrl-C, SIGTERM, --max-wall): whoever waits for this system's work must not loop on.
  if (watch::stop_requested())
    throw BenchError("INTERRUPTED", "the run was stopped at t=" + format_ns(ticks_to_ns(now())) + " ns");
}

void SimulatedSystem::finish() {
  if (sim_.finished_) return;  // (kept by the simulation: every view of it finishes it once)
  sim_.finished_ = true;
  Executor& exec = *sim_.exec_;
  try {
    for (NodeIndex n = 0; n < sim_.nodes_.size(); ++n)
      if (exec.runs(n)) crash::guarded(sim_, n, "finish", [&] { sim_.components_[n]->finish(); });
  } catch (const Error& e) {
    if (!exec.hold(e)) throw;
  }
  exec.finished();  // (in parts: every part gets what finish() folded in, or ends with a part's error)
}

Tick SimulatedSystem::now() const noexcept { return sim_.now(); }
std::uint64_t SimulatedSystem::events() const noexcept { return sim_.exec_->events() + sim_.train_flits(); }
bool SimulatedSystem::idle() const noexcept {
  return sim_.released_ || sim_.exec_->idle();  // (a released system has nothing left to run)
}
bool SimulatedSystem::is_split() const noexcept { return sim_.exec_->parts() > 1; }
void SimulatedSystem::request_stop() noexcept { sim_.request_stop(); }

std::vector<std::string> SimulatedSystem::waiting() {
  live("waiting()");
  // (node, phrase) of the components that run here; the executor makes it the whole system's, in node order.
  std::vector<std::pair<NodeIndex, std::string>> all;
  for (NodeIndex n = 0; n < sim_.nodes_.size(); ++n)
    if (sim_.exec_->runs(n))
      if (const auto* w = dynamic_cast<const Waiting*>(sim_.components_[n].get()))
        if (std::string what = w->waiting_for(); !what.empty()) all.emplace_back(n, std::move(what));
  sim_.exec_->gather_waiting(all);
  std::vector<std::string> out;
  for (auto& [n, what] : all) out.push_back(std::move(what));
  return out;
}

std::size_t SimulatedSystem::node_count() const noexcept { return sim_.nodes_.size(); }
std::string_view SimulatedSystem::node_id(NodeIndex n) const noexcept { return sim_.node_id(n); }
NodeIndex SimulatedSystem::find_node(std::string_view id) const { return sim_.find_node(id); }
NodeIndex SimulatedSystem::lookup_node(std::string_view id) const noexcept { return sim_.lookup_node(id); }
Component& SimulatedSystem::component(std::string_view node) {
  live("component()");
  return sim_.component(sim_.find_node(node));
}
Component& SimulatedSystem::component(NodeIndex n) {
  live("component()");
  return sim_.component(n);
}

const Stat& SimulatedSystem::stat(std::string_view node, std::string_view name) const {
  const NodeIndex n = sim_.lookup_node(node);
  if (n == kNoNode) throw SimError("no node '" + std::string(node) + "'");
  const std::span<const Stat> stats = stats_of(n);
  if (const std::size_t i = stat_index(sim_.nodes_[n].type->info, name); i < stats.size()) return stats[i];
  throw SimError(std::string(node) + " has no statistic '" + std::string(name) + "'");
}

std::span<const RawParam> SimulatedSystem::attrs() const noexcept { return sim_.attrs(); }

std::span<const Stat> SimulatedSystem::stats_of(NodeIndex n) const noexcept {
  const std::vector<std::uint32_t>& begin = sim_.el_->stat_begin;
  return {sim_.stats_.data() + begin[n], sim_.stats_.data() + begin[n + 1]};
}

Traffic SimulatedSystem::traffic(const Link& link) const noexcept {
  return sim_.traffic(static_cast<std::uint32_t>(&link - sim_.el_->links.data()));
}
std::string_view SimulatedSystem::view_name(ViewId view) const { return sim_.router_.view_name(view); }

RouteInfo SimulatedSystem::route_info(std::string_view from, std::string_view to, std::string_view view) {
  const Route& r = sim_.route(sim_.find_node(from), sim_.find_node(to), sim_.find_view(view));
  const Elaboration& el = *sim_.el_;
  RouteInfo info;
  const bool distance = el.metric == RouteMetric::kDistance;
  info.cost = distance ? double(r.cost) * 1e-6 : ticks_to_ns(r.cost);
  info.cost_unit = distance ? "mm" : "ns";
  for (std::size_t k = 0; k < r.nodes.size(); ++k) {
    const Elaboration::Node& n = el.nodes[r.nodes[k]];
    RouteHop h;
    h.node = n.id;
    h.impl = n.impl;
    h.transit_ns = ticks_to_ns(sim_.router_.transit(r.nodes[k]));
    if (k < r.ports.size()) {
      const std::uint32_t li = el.port_begin[r.nodes[k]] + r.ports[k];
      const Link& l = el.links[li];
      h.link_kind = el.link_kinds[li];
      h.link_bw_gbs = l.bandwidth_gbs;
      h.link_latency_ns = ticks_to_ns(l.latency);
      h.link_flit_bytes = l.flit_bytes;
    }
    info.hops.push_back(h);
  }
  return info;
}

std::vector<LinkUse> SimulatedSystem::link_use() const {
  const Elaboration& el = *sim_.el_;
  std::vector<LinkUse> out;
  for (const std::uint32_t i : el.edge_links) {  // (in the graph's order)
    const Link& l = el.links[i];
    const Traffic w = sim_.traffic(i);
    if (w.bytes == 0) continue;
    out.push_back({el.nodes[l.src].id, el.nodes[l.dst].id, el.link_kinds[i], w.messages, w.bytes, ticks_to_ns(w.busy)});
  }
  return out;
}

Service* SimulatedSystem::find_service(std::string_view name) {
  live("find_service()");
  return sim_.find_service(name);
}
void SimulatedSystem::provide(std::string_view name, Service& service) {
  live("provide()");
  sim_.services_.provide(name, service);
}
void SimulatedSystem::share(ReplicatedService& news) {
  live("share()");
  sim_.services_.share(news);
}
void SimulatedSystem::unshare(ReplicatedService& news) noexcept { sim_.services_.unshare(news); }
OpLogView* SimulatedSystem::op_log() noexcept { return sim_.oplog_; }
std::vector<const Extension*> SimulatedSystem::extensions(std::string_view kind) const {
  return sim_.registry_.extensions_of(kind);
}
const Extension* SimulatedSystem::extension(std::string_view kind, std::string_view name) const {
  return sim_.registry_.extension(kind, name);
}

}  // namespace kbsim::core
