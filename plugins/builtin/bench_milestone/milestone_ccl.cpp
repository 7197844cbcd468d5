// milestone-ccl (docs/evaluations.md, "The allreduce milestone"): the
// reference's allreduce evaluation as one command. It runs ccl-allreduce over
//   - the latency sweep: 12 sizes x {ring_1d of 6 SIPs, torus_2d 3x2,
//     mesh_2d_no_wrap 3x2} x every registered CCL algorithm,
//   - the root sweep: lrab with its corner root beside its center root,
//   - the buffer-kind sweep: tcm / sram / hbm slots on the torus,
// as independent points (kbsim run -j N, or mpirun), and writes summary.csv,
// the figures (latency per topology, buffer kinds, the hand-derived model and
// the external simulator's point, center vs corner root, the SIP topologies)
// and index.html. Every value drawn is a point's measured critical path.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "kbsim/pe/ccl.hpp"
#include "sweep_report.hpp"
#include "topology_diagram.hpp"

namespace kbsim::milestone {

namespace {

constexpr double kFsimNs = 366000.0;  // the external simulator's allreduce at 96 KB per PE (the reference's figure)
constexpr const char* kLrab = "lrab_hierarchical_allreduce";

struct Topo {
  std::string name, label;
  std::vector<std::string> sets;
};

const std::vector<Topo>& topologies() {
  static const std::vector<Topo> t = {
      {"ring_1d", "ring_1d, 6 SIPs", {"system.sips.count=6", "system.sips.topology=ring_1d"}},
      {"torus_2d",
       "torus_2d 3x2",
       {"system.sips.count=6", "system.sips.topology=torus_2d", "system.sips.w=3", "system.sips.h=2"}},
      {"mesh_2d_no_wrap",
       "mesh_2d_no_wrap 3x2",
       {"system.sips.count=6", "system.sips.topology=mesh_2d_no_wrap", "system.sips.w=3", "system.sips.h=2"}},
  };
  return t;
}

std::string file_tag(const Topo& t) { return t.name == "ring_1d" ? "ring_1d_6" : t.name + "_3x2"; }

/// One measurement the figures read.
struct Case {
  std::string sweep;  ///< latency, root, buffer
  const Topo* topo;
  std::string algorithm, root, buffer;
  std::int64_t n_elem;
  std::size_t point;  ///< index into the points run (identical cases share one)
};

std::string short_name(const std::string& algo) {
  if (algo == kLrab) return "lrab (center root)";
  return algo;
}

constexpr StringParam kSizes{"sizes", "8,32,64,128,512,1024,2048,4096,8192,16384,32768,49152",
                             "f16 elements per cube's shard (49152 = 96 KB per PE, the reference's largest)"};
constexpr StringParam kTopologies{"topologies", "ring_1d,torus_2d,mesh_2d_no_wrap",
                                  "SIP topologies of the latency sweep (6 SIPs; 3x2 for the 2-D ones)"};
constexpr StringParam kAlgorithms{"algorithms", "all",
                                  "CCL algorithms of the latency sweep (all: every registered one)"};
constexpr StringParam kBufferSizes{
    "buffer_sizes", "512,4096,16384,32768",
    "f16 elements per shard of the buffer-kind sweep (tcm/sram/hbm slots, torus_2d 3x2)"};

class MilestoneCcl final : public Bench {
 public:
  static BenchInfo info() {
    BenchInfo i{"milestone-ccl",
                "the allreduce milestone: ccl-allreduce over 12 sizes x 3 SIP topologies x every CCL algorithm, center "
                "vs corner root, IPCQ buffer kinds; writes summary.csv, SVG figures and index.html",
                {kSizes, kTopologies, kAlgorithms, kBufferSizes}};
    i.reads_topology = true;  // its points run on the configured topology
    return i;
  }

  void run(BenchContext& ctx) override {
    const Params& p = ctx.params();
    const std::vector<std::int64_t> sizes = int_list(p, kSizes), buffer_sizes = int_list(p, kBufferSizes);
    std::vector<const Topo*> topos;
    for (const std::string& name : word_list(p, kTopologies)) {
      auto it = std::find_if(topologies().begin(), topologies().end(), [&](const Topo& t) { return t.name == name; });
      p.check(it != topologies().end(), kTopologies,
              "lists ring_1d, torus_2d or mesh_2d_no_wrap ('" + name + "' is not)");
      topos.push_back(&*it);
    }
    const ccl::Config& ccl = ccl::config(ctx);
    std::vector<std::string> algos;
    const std::vector<std::string> asked = word_list(p, kAlgorithms);
    for (const auto& [name, entry] : ccl.algorithms)
      if (asked == std::vector<std::string>{"all"} || std::count(asked.begin(), asked.end(), name))
        algos.push_back(name);
    for (const std::string& a : asked)
      p.check(a == "all" || ccl.algorithms.count(a), kAlgorithms,
              "names registered CCL algorithms ('" + a + "' is not)");
    const bool lrab = ccl.algorithms.count(kLrab) != 0;
    const Topo& torus = topologies()[1];

    // The cases, each mapped to a point; identical runs (the torus tcm center-root lrab in three sweeps) run once.
    std::vector<SweepPoint> points;
    std::map<std::string, std::size_t> seen;
    std::vector<Case> cases;
    auto add = [&](std::string sweep, const Topo& t, const std::string& algo, const std::string& root,
                   const std::string& buffer, std::int64_t n) {
      const auto& supported = ccl.algorithms.at(algo).info->sip_topologies;
      if (!supported.empty() && std::find(supported.begin(), supported.end(), t.name) == supported.end()) return;
      SweepPoint sp{"ccl-allreduce", {"n_elem=" + std::to_string(n)}, t.sets};
      sp.overrides.push_back("ccl.algorithm=" + algo);
      if (algo == kLrab) sp.overrides.push_back(std::string("ccl.") + kLrab + ".root=" + root);
      sp.overrides.push_back("ccl.buffer_kind=" + buffer);
      std::string key;
      for (const auto& s : sp.params) key += s + ";";
      for (const auto& s : sp.overrides) key += s + ";";
      auto [it, fresh] = seen.try_emplace(key, points.size());
      if (fresh) points.push_back(std::move(sp));
      cases.push_back({std::move(sweep), &t, algo, root, buffer, n, it->second});
    };
    for (const Topo* t : topos)
      for (const std::string& a : algos)
        for (std::int64_t n : sizes) add("latency", *t, a, "center", "tcm", n);
    if (lrab)
      for (const Topo* t : topos)
        for (std::int64_t n : sizes) add("root", *t, kLrab, "corner", "tcm", n);
    const std::string buffer_algo = lrab ? kLrab : ccl.algorithm;
    for (const char* kind : {"tcm", "sram", "hbm"})
      for (std::int64_t n : buffer_sizes) add("buffer", torus, buffer_algo, "center", kind, n);

    const std::vector<PointResult> results = ctx.run_points(points);
    const std::size_t failed = note_failures(ctx, results);
    auto crit = [&](const Case& c) -> std::optional<double> {
      const PointResult& r = results[c.point];
      return r.ok ? r.metrics.number("crit_ns") : std::nullopt;
    };
    // The reference's hand-derived model at each size, as ccl-allreduce reports it beside its measurement.
    std::map<std::int64_t, double> model;
    for (const Case& c : cases)
      if (const auto v = results[c.point].metrics.number("reference_model_ns")) model.emplace(c.n_elem, *v);

    Folder folder(ctx, "kbsim allreduce milestone",
                  "Each value is the critical path (the slowest PE's kernel, every rank) of one all_reduce of an f16 "
                  "shard on every cube's pe0 of every SIP, as ccl-allreduce measures it. Sizes are bytes per PE "
                  "(the shard each cube's pe0 holds), as the reference counts them.");
    fig::Table summary{"All points",
                       {"sweep", "topology", "algorithm", "root", "buffer_kind", "n_elem", "bytes_per_pe", "crit_ns",
                        "model_ns", "status"},
                       {}};
    for (const Case& c : cases) {
      const auto v = crit(c);
      char crit_s[32] = "", model_s[32] = "";
      if (v) std::snprintf(crit_s, sizeof crit_s, "%.1f", *v);
      if (model.count(c.n_elem)) std::snprintf(model_s, sizeof model_s, "%.1f", model.at(c.n_elem));
      summary.rows.push_back({c.sweep, c.topo->label, c.algorithm, c.algorithm == kLrab ? c.root : "-", c.buffer,
                              std::to_string(c.n_elem), std::to_string(c.n_elem * 2), crit_s, model_s,
                              results[c.point].ok ? "ok" : results[c.point].error});
    }

    auto size_axis = [] {
      fig::Axis x{"shard size per PE (bytes, f16)", true, std::nullopt, std::nullopt, 4, {}};
      x.format = [](double b) { return bytes_label(b); };
      return x;
    };
    auto series_of = [&](const std::string& sweep, const Topo& t, const std::string& algo, const std::string& root,
                         const std::string& buffer, std::string name) {
      fig::Series s;
      s.name = std::move(name);
      for (const Case& c : cases)
        if (c.sweep == sweep && c.topo == &t && c.algorithm == algo && c.root == root && c.buffer == buffer)
          if (const auto v = crit(c)) {
            s.x.push_back(static_cast<double>(c.n_elem) * 2.0);
            s.y.push_back(*v / 1000.0);
          }
      return s;
    };
    auto model_series = [&](const std::vector<std::int64_t>& ns) {
      fig::Series s;
      s.name = "hand-derived model: 1346 ns + 1.20 ns per 128-B packet";
      s.dashed = true;
      s.markers = false;
      s.color = "#888888";
      for (std::int64_t n : ns)
        if (model.count(n)) {
          s.x.push_back(static_cast<double>(n) * 2.0);
          s.y.push_back(model.at(n) / 1000.0);
        }
      return s;
    };

    // Latency per topology: every algorithm, the corner root, and the model.
    for (const Topo* t : topos) {
      fig::LinePlot plot;
      plot.title = "allreduce latency, " + t->label;
      plot.x = size_axis();
      plot.y = {"critical path (µs)", true, std::nullopt, std::nullopt, 10, {}};
      for (const std::string& a : algos)
        plot.series.push_back(series_of("latency", *t, a, "center", "tcm", short_name(a)));
      if (lrab) {
        fig::Series corner = series_of("root", *t, kLrab, "corner", "tcm", "lrab (corner root)");
        corner.dashed = true;
        plot.series.push_back(std::move(corner));
      }
      plot.series.push_back(model_series(sizes));
      folder.figure("allreduce_latency_" + file_tag(*t) + ".svg",
                    "Allreduce latency on " + t->label + ", every CCL algorithm (tcm slots)", fig::svg(plot));
    }

    // Buffer kinds on the torus.
    {
      fig::LinePlot plot;
      plot.title = "allreduce buffer kinds, torus_2d 3x2";
      plot.x = size_axis();
      plot.y = {"critical path (µs)", true, std::nullopt, std::nullopt, 10, {}};
      fig::Table t{"Buffer kinds (torus_2d 3x2, " + short_name(buffer_algo) + ")",
                   {"n_elem", "bytes_per_pe", "tcm_ns", "sram_ns", "hbm_ns"},
                   {}};
      for (const char* kind : {"tcm", "sram", "hbm"})
        plot.series.push_back(series_of("buffer", torus, buffer_algo, "center", kind, std::string(kind) + " slots"));
      for (std::int64_t n : buffer_sizes) {
        std::vector<std::string> row{std::to_string(n), std::to_string(n * 2)};
        for (const char* kind : {"tcm", "sram", "hbm"}) {
          std::string cell;
          for (const Case& c : cases)
            if (c.sweep == "buffer" && c.buffer == kind && c.n_elem == n)
              if (const auto v = crit(c)) {
                char b[32];
                std::snprintf(b, sizeof b, "%.1f", *v);
                cell = b;
              }
          row.push_back(cell);
        }
        t.rows.push_back(std::move(row));
      }
      folder.figure("allreduce_buffer_kinds_torus_2d_3x2.svg",
                    "IPCQ slot memory: tcm, sram and hbm slots on torus_2d 3x2", fig::svg(plot));
      folder.table("buffer_kinds.csv", std::move(t));
    }

    // The model and the external simulator's point beside the measured lrab on the torus.
    if (lrab && std::count(topos.begin(), topos.end(), &torus)) {
      fig::LinePlot plot;
      plot.title = "allreduce vs hand-derived model and FSIM, torus_2d 3x2";
      plot.x = size_axis();
      plot.y = {"critical path (µs)", true, std::nullopt, std::nullopt, 10, {}};
      plot.series.push_back(series_of("latency", torus, kLrab, "center", "tcm", "kbsim, lrab (center root)"));
      plot.series.push_back(model_series(sizes));
      plot.markers.push_back({96.0 * 1024.0, kFsimNs / 1000.0, "FSIM: 366 µs at 96 KB per PE", "#d62728"});
      folder.figure("allreduce_vs_model_and_fsim.svg",
                    "kbsim's lrab allreduce against the reference's hand-derived model and the external simulator "
                    "(FSIM) point",
                    fig::svg(plot));
    }

    // Center vs corner root at the largest size.
    if (lrab) {
      const std::int64_t n = sizes.back();
      fig::BarChart bars;
      bars.title = "allreduce center vs corner root at " + bytes_label(static_cast<double>(n) * 2) + " per PE";
      bars.y = {"critical path (µs)", false, 0.0, std::nullopt, 10, {}};
      bars.value_labels = true;
      fig::BarChart::Group center{"center root", {}, ""}, corner{"corner root", {}, ""};
      Metrics& gains = ctx.metrics().object("root_change_pct");
      for (const Topo* t : topos) {
        std::optional<double> c0, c1;
        for (const Case& c : cases)
          if (c.topo == t && c.algorithm == kLrab && c.n_elem == n && c.buffer == "tcm")
            (c.root == "center" ? c0 : c1) = crit(c);
        bars.categories.push_back(t->label);
        center.values.push_back(c0 ? *c0 / 1000.0 : 0.0);
        corner.values.push_back(c1 ? *c1 / 1000.0 : 0.0);
        if (c0 && c1) gains.set(t->name, (*c0 - *c1) / *c1 * 100.0);
      }
      bars.groups = {center, corner};
      folder.figure("allreduce_center_vs_corner_root.svg",
                    "lrab's root cube: the center (8 hops inside a SIP) against the corner (12 hops)", fig::svg(bars));
    }

    folder.figure("sip_topologies.svg",
                  "The SIP topologies: ring_1d of 6, torus_2d 3x2 and mesh_2d_no_wrap 3x2, and lrab's cube-level "
                  "reduction inside one SIP (4x4 cubes, center root)",
                  topology_diagram());
    folder.table("summary.csv", std::move(summary));
    folder.finish();

    Metrics& m = ctx.metrics();
    m.set("points", static_cast<std::uint64_t>(points.size()));
    m.set("cases", static_cast<std::uint64_t>(cases.size()));
    m.set("failed", static_cast<std::uint64_t>(failed));
    Metrics& at96 = m.object("crit_ns_at_largest");
    for (const Case& c : cases)
      if (c.sweep == "latency" && c.n_elem == sizes.back())
        if (const auto v = crit(c)) at96.object(c.topo->name).set(c.algorithm, *v);
    ctx.note(std::to_string(points.size()) + " points (" + std::to_string(cases.size()) +
             " cases) written as summary.csv, buffer_kinds.csv, " + std::to_string(2 + topos.size() + (lrab ? 2 : 0)) +
             " figures and index.html");
  }
};

}  // namespace

void add_milestone_ccl(PluginDescriptor& plugin) { add_bench<MilestoneCcl>(plugin); }

}  // namespace kbsim::milestone
