#include "report/results_writer.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <map>

#include "component/op_log.hpp"
#include "component/placement.hpp"
#include "component/simulation.hpp"
#include "plugin/registry.hpp"
#include "report/json.hpp"
#include "report/staged_files.hpp"

namespace kbsim::core {

namespace {

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

/// Whether two graphs would be written alike (benches that build one graph many times get it written once).
bool same_graph(const Graph& a, const Graph& b) {
  if (&a == &b) return true;  // systems of one elaboration share their graph
  if (a.nodes.size() != b.nodes.size() || a.edges.size() != b.edges.size() || a.source != b.source ||
      a.route_metric != b.route_metric)
    return false;
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const NodeSpec &x = a.nodes[i], &y = b.nodes[i];
    if (x.id != y.id || x.impl != y.impl || x.params.size() != y.params.size()) return false;
    for (std::size_t k = 0; k < x.params.size(); ++k)
      if (x.params[k].name != y.params[k].name || x.params[k].value != y.params[k].value) return false;
  }
  for (std::size_t i = 0; i < a.edges.size(); ++i) {
    const EdgeSpec &x = a.edges[i], &y = b.edges[i];
    if (x.src != y.src || x.dst != y.dst || x.bandwidth_gbs != y.bandwidth_gbs || x.latency_ns != y.latency_ns ||
        x.flit_bytes != y.flit_bytes || x.kind != y.kind || x.route_mm != y.route_mm)
      return false;
  }
  return true;
}

/// Writes one run's files; each section of results.json is one function.
class Writer {
 public:
  Writer(const RunRecord& run, const Registry& registry) : run_(run), registry_(registry) {
    const auto& graphs = *run.graphs;
    one_graph_ = std::all_of(graphs.begin(), graphs.end(), [&](const auto& g) { return same_graph(*g, *graphs[0]); });
  }

  void topology_json(JsonWriter& w) const {
    if (one_graph_) return write_graph(w, first_graph(), registry_);
    w.begin_array();
    for (const auto& g : *run_.graphs) write_graph(w, *g, registry_);
    w.end_array();
  }

  void results_json(JsonWriter& w) const {
    w.begin_object();
    w.field("kbsim_version", KBSIM_VERSION);
    w.field("abi_version", std::uint64_t{kAbiVersion});
    w.field("bench", run_.bench);
    w.field("interrupted", run_.interrupted);
    w.key("params");
    write_params(w, *run_.params);
    topology(w);
    write_metrics_fields(w, run_.config_sections);
    implementations(w);
    figures(w);
    components(w);
    links(w);
    outcomes(w);
    w.key("metrics");
    write_metrics(w, *run_.metrics);
    w.end_object();
  }

  void points_json(JsonWriter& w) const {
    w.begin_object();
    w.field("bench", run_.bench);
    w.key("points");
    w.begin_array();
    for (std::size_t i = 0; i < run_.points->size(); ++i) {
      const PointRecord& r = (*run_.points)[i];
      w.begin_object();
      w.field("index", i);
      w.key("config");
      write_metrics(w, r.config);
      w.field("ok", r.result.ok);
      if (!r.result.ok) w.field("error", r.result.error);
      w.field("sim_time_ns", ticks_to_ns(r.sim_time));
      w.field("events", r.events);
      w.key("metrics");
      write_metrics(w, r.result.metrics);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }

 private:
  const Graph& first_graph() const { return run_.graphs->empty() ? *run_.topology : *run_.graphs->front(); }
  /// The systems' file-unique prefix ("s2/" for the third of several; none for one).
  std::string prefix(std::size_t k) const { return run_.systems->size() > 1 ? "s" + std::to_string(k) + "/" : ""; }

  void topology(JsonWriter& w) const {
    w.key("topology");
    w.begin_object();
    std::size_t nodes = 0, edges = 0;
    for (const auto& g : *run_.graphs) {
      nodes += g->nodes.size();
      edges += g->edges.size();
    }
    w.field("source", first_graph().source);
    w.field("systems", run_.systems->size());
    w.field("nodes", nodes);
    w.field("edges", edges);
    w.key("overrides");
    w.begin_array();
    for (const auto& o : *run_.overrides) w.value(o);
    w.end_array();
    w.field("file", "topology.json");
    w.field("distinct_graphs", one_graph_ ? 1u : static_cast<unsigned>(run_.graphs->size()));
    w.end_object();
  }

  void implementations(JsonWriter& w) const {
    std::map<std::string, std::size_t> count;
    for (const auto& s : *run_.systems)
      for (const auto& n : s->elaboration()->nodes) ++count[n.impl];
    w.key("implementations");
    w.begin_object();
    for (const auto& [impl, nodes] : count) {
      const auto& entry = registry_.impls().at(impl);
      w.key(impl);
      w.begin_object();
      w.field("type", entry.type);
      w.field("library", entry.library);
      w.field("nodes", nodes);
      w.end_object();
    }
    w.end_object();
  }

  /// Simulated time and events, then the host's figures (which differ from machine to machine).
  void figures(JsonWriter& w) const {
    w.field("sim_time_ns", ticks_to_ns(run_.sim_time));
    w.field("events", run_.events);
    w.field("wall_time_s", run_.wall_s);
    w.field("events_per_s", run_.wall_s > 0 ? static_cast<double>(run_.events) / run_.wall_s : 0.0);
    w.key("host");
    w.begin_object();
    w.field("build_wall_s", run_.build_wall_s);
    w.field("elaborations", run_.elaborations);
    w.field("peak_rss_mb", peak_rss_mb());
    // `events` counts every flit's event, as the flit-by-flit model runs them; the engine ran fewer where trains
    // went whole (docs/architecture.md, "Flit trains advanced as a whole").
    std::uint64_t whole = 0;
    if (run_.systems)
      for (const auto& s : *run_.systems) whole += s->train_flits();
    w.field("engine_events", run_.events - whole);
    if (run_.placement) run_.placement->write_host(w, *run_.systems);
    w.end_object();
  }

  /// Every component's statistics, idle ones (every statistic zero) left out.
  void components(JsonWriter& w) const {
    w.key("components");
    w.begin_object();
    for (std::size_t k = 0; k < run_.systems->size(); ++k) {
      Simulation& s = *(*run_.systems)[k];
      for (std::size_t ni = 0; ni < s.elaboration()->nodes.size(); ++ni) {
        const auto& n = s.elaboration()->nodes[ni];
        const auto stats = s.system().stats_of(static_cast<NodeIndex>(ni));
        if (std::all_of(stats.begin(), stats.end(), [](const Stat& st) { return st.count == 0 && st.value == 0; }))
          continue;
        w.key(prefix(k) + n.id);
        w.begin_object();
        w.field("impl", n.impl);
        const auto& specs = n.type->info.stats;
        for (std::size_t i = 0; i < specs.size(); ++i) {
          if (specs[i].kind == StatKind::kCounter) {
            w.field(specs[i].name, stats[i].count);
          } else {
            w.field(specs[i].name, stats[i].value);
          }
        }
        w.end_object();
      }
    }
    w.end_object();
  }

  /// Every link that carried bytes (control-only links carry none and take no time).
  void links(JsonWriter& w) const {
    w.key("links");
    w.begin_array();
    for (std::size_t k = 0; k < run_.systems->size(); ++k) {
      Simulation& s = *(*run_.systems)[k];
      const double span = ticks_to_ns(s.now());
      for (const std::uint32_t i : s.elaboration()->edge_links) {  // (in the graph's order)
        const Link& l = s.elaboration()->links[i];
        const Traffic u = s.traffic(i);
        if (u.bytes == 0) continue;
        w.begin_object();
        w.field("src", prefix(k) + s.elaboration()->nodes[l.src].id);
        w.field("dst", prefix(k) + s.elaboration()->nodes[l.dst].id);
        w.field("messages", u.messages);
        w.field("flits", u.flits);
        w.field("bytes", u.bytes);
        w.field("busy_ns", ticks_to_ns(u.busy));
        w.field("utilization", span > 0 ? ticks_to_ns(u.busy) / span : 0.0);
        w.end_object();
      }
    }
    w.end_array();
  }

  /// The sweep's points, the op log, and what the observers add.
  void outcomes(JsonWriter& w) const {
    if (!run_.points->empty()) {
      w.key("points");
      w.begin_object();
      w.field("count", run_.points->size());
      w.field("failed", failed_count(*run_.points));
      w.field("file", "points.json");
      w.end_object();
    }
    if (run_.op_log) {
      w.key("op_log");
      w.begin_object();
      w.field("records", run_.op_log->count());
      w.field("open_at_end", run_.op_log->open());
      w.end_object();
    }
    Metrics sections;
    for (const auto& o : *run_.observers) o->write_results(sections);
    write_metrics_fields(w, sections);
  }

  const RunRecord& run_;
  const Registry& registry_;
  bool one_graph_ = true;
};

}  // namespace

void write_results(const std::filesystem::path& dir, const RunRecord& run, const Registry& registry) {
  std::filesystem::create_directories(dir);
  const Writer writer(run, registry);
  StagedFiles files;
  files.json(dir / "topology.json", [&](JsonWriter& w) { writer.topology_json(w); });
  files.json(dir / "results.json", [&](JsonWriter& w) { writer.results_json(w); });
  if (!run.points->empty()) files.json(dir / "points.json", [&](JsonWriter& w) { writer.points_json(w); });
  for (const auto& [name, content] : *run.files) files.text(dir / name, content);
  for (const auto& o : *run.observers) o->commit();
  files.commit();
}

}  // namespace kbsim::core
