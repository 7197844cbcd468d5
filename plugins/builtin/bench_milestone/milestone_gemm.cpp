// milestone-gemm (docs/evaluations.md, "The GEMM milestone"): matmul-composite
// over square shapes (16...512) x the three operand stagings (load_ref: A
// loaded up front and B streamed per tile; pinned: both loaded; ref_ref: both
// streamed), plus the reference's 32x3072x32 calibration shape, as independent
// points. Per point: engine busy time per pipeline stage, the composite and
// kernel windows and MAC utilisation, measured and as the reference's
// theoretical pipeline model predicts it:
//   a tile (32x64x32 MACs) takes T_STAGE = 16 ns on the MAC array (4096 MACs
//   per ns); each tile streams its ref operands from HBM at 256 GB/s (2 bytes
//   per element); D_STAGES = 3 pipeline stages fill before the first result:
//   window = (tiles + D_STAGES - 1) x max(T_STAGE, streamed bytes / 256 GB/s).
// GEMM utilisation = tiles x T_STAGE / window (the MAC array's duty cycle);
// useful efficiency = M x K x N / (4096 MAC/ns x window) (under-tile shapes pad).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>

#include "sweep_report.hpp"

namespace kbsim::milestone {

namespace {

constexpr double kHbmGbs = 256.0, kTStageNs = 16.0, kDStages = 3.0, kBytesPerElem = 2.0;
constexpr double kPeakMacsPerNs = 4096.0;
constexpr std::int64_t kTm = 32, kTk = 64, kTn = 32;

struct Theory {
  double tiles, window_ns, gemm_util, useful_eff;
};

Theory theory(std::int64_t m, std::int64_t k, std::int64_t n, const std::string& variant) {
  auto up = [](std::int64_t a, std::int64_t b) { return static_cast<double>((a + b - 1) / b); };
  const double tiles = up(m, kTm) * up(k, kTk) * up(n, kTn);
  double streamed = 0;                                              // bytes read from HBM per tile
  if (variant != "pinned") streamed += kTk * kTn * kBytesPerElem;   // B
  if (variant == "ref_ref") streamed += kTm * kTk * kBytesPerElem;  // and A
  const double stage = std::max(kTStageNs, streamed / kHbmGbs);
  const double window = (tiles + kDStages - 1) * stage;
  return {tiles, window, tiles * kTStageNs / window,
          static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n) / (kPeakMacsPerNs * window)};
}

std::string num(double v, const char* f = "%.1f") {
  char b[32];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

constexpr StringParam kShapes{"shapes", "16,32,64,96,128,192,256,512", "M = K = N of each shape"};
constexpr StringParam kVariants{"variants", "load_ref,pinned,ref_ref", "operand stagings (matmul-composite's variant)"};
constexpr BoolParam kCalibration{"calibration", true, "also run the reference's 32x3072x32 load_ref calibration shape"};

class MilestoneGemm final : public Bench {
 public:
  static BenchInfo info() {
    BenchInfo i{"milestone-gemm",
                "the GEMM milestone: matmul-composite over square shapes x operand stagings, stage breakdown and MAC "
                "utilisation against the reference's theoretical pipeline model; writes gemm_sweep.csv, SVG figures "
                "and index.html",
                {kShapes, kVariants, kCalibration}};
    i.reads_topology = true;  // its points run on the configured topology
    return i;
  }

  void run(BenchContext& ctx) override {
    const Params& p = ctx.params();
    const std::vector<std::int64_t> shapes = int_list(p, kShapes);
    const std::vector<std::string> variants = word_list(p, kVariants);
    for (const std::string& v : variants)
      p.check(v == "load_ref" || v == "pinned" || v == "ref_ref", kVariants,
              "lists load_ref, pinned or ref_ref ('" + v + "' is not)");
    struct Case {
      std::int64_t m, k, n;
      std::string variant;
    };
    std::vector<Case> cases;
    for (std::int64_t s : shapes)
      for (const std::string& v : variants) cases.push_back({s, s, s, v});
    if (p.get(kCalibration)) cases.push_back({32, 3072, 32, "load_ref"});
    std::vector<SweepPoint> points;
    for (const Case& c : cases)
      points.push_back(
          {"matmul-composite",
           {"M=" + std::to_string(c.m), "K=" + std::to_string(c.k), "N=" + std::to_string(c.n), "variant=" + c.variant},
           {}});
    const std::vector<PointResult> results = ctx.run_points(points);
    const std::size_t failed = note_failures(ctx, results);

    fig::Table table{"All points",
                     {"M", "K", "N", "variant", "under_tile", "tiles", "dma_in_ns", "fetch_ns", "gemm_ns", "dma_out_ns",
                      "composite_window_ns", "kernel_window_ns", "gemm_util_pct", "useful_eff_pct", "theory_window_ns",
                      "theory_gemm_util_pct", "theory_useful_eff_pct", "status"},
                     {}};
    struct Row {
      double dma_in, fetch, gemm, dma_out, composite, kernel;
    };
    std::vector<std::optional<Row>> rows(cases.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      const Theory t = theory(c.m, c.k, c.n, c.variant);
      const bool under = c.m < kTm || c.k < kTk || c.n < kTn;
      std::vector<std::string> r{std::to_string(c.m), std::to_string(c.k),  std::to_string(c.n),
                                 c.variant,           under ? "yes" : "no", num(t.tiles, "%.0f")};
      if (results[i].ok) {
        const std::string who = "point " + std::to_string(i + 1);
        Row row{need(results[i], "stage_busy_ns.dma_read", who), need(results[i], "stage_busy_ns.fetch", who),
                need(results[i], "stage_busy_ns.gemm", who),     need(results[i], "stage_busy_ns.dma_write", who),
                need(results[i], "composite_window_ns", who),    need(results[i], "kernel_window_ns", who)};
        rows[i] = row;
        const double macs = static_cast<double>(c.m) * static_cast<double>(c.k) * static_cast<double>(c.n);
        for (double v : {row.dma_in, row.fetch, row.gemm, row.dma_out, row.composite, row.kernel}) r.push_back(num(v));
        r.push_back(num(row.gemm / row.composite * 100.0, "%.2f"));
        r.push_back(num(macs / (kPeakMacsPerNs * row.composite) * 100.0, "%.2f"));
      } else {
        for (int k = 0; k < 8; ++k) r.emplace_back();
      }
      r.push_back(num(t.window_ns));
      r.push_back(num(t.gemm_util * 100.0, "%.2f"));
      r.push_back(num(t.useful_eff * 100.0, "%.2f"));
      r.push_back(results[i].ok ? "ok" : results[i].error);
      table.rows.push_back(std::move(r));
    }

    Folder folder(ctx, "kbsim GEMM milestone",
                  "matmul-composite on one PE: a tiled GEMM (32x64x32 tiles) whose operands are staged three ways. "
                  "Measured values are engine busy times and windows of each run; the theoretical model is the "
                  "reference's pipeline model (T_STAGE 16 ns per tile, HBM 256 GB/s, 3 pipeline stages, 2 bytes per "
                  "element). Shapes below one tile are marked under_tile.");
    auto shape_axis = [] {
      fig::Axis x{"M = K = N", true, std::nullopt, std::nullopt, 2, {}};
      x.format = [](double v) { return num(v, "%.0f"); };
      return x;
    };
    // The stage breakdown of the first variant (load_ref by default), per shape.
    const std::string& first = variants.front();
    {
      fig::BarChart bars;
      bars.title = "GEMM stage breakdown, " + first;
      bars.y = {"engine busy time (ns)", true, std::nullopt, std::nullopt, 10, {}};
      fig::BarChart::Group in{"DMA in", {}, ""}, fetch{"Fetch", {}, ""}, gemm{"GEMM", {}, ""}, out{"DMA out", {}, ""};
      for (std::size_t i = 0; i < cases.size(); ++i)
        if (cases[i].variant == first && cases[i].m == cases[i].k && rows[i]) {
          bars.categories.push_back(std::to_string(cases[i].m) + "³");
          in.values.push_back(rows[i]->dma_in);
          fetch.values.push_back(rows[i]->fetch);
          gemm.values.push_back(rows[i]->gemm);
          out.values.push_back(rows[i]->dma_out);
        }
      bars.groups = {in, fetch, gemm, out};
      folder.figure("gemm_stage_breakdown.svg", "Busy time of each pipeline stage's engine, " + first + " staging",
                    fig::svg(bars));
    }
    // Two series per variant over the square shapes: `solid` and `dashed` give a case's value, if it has one.
    using Value = std::function<std::optional<double>(std::size_t)>;
    auto per_variant = [&](fig::LinePlot& plot, const std::string& solid_name, const std::string& dashed_name,
                           const Value& solid, const Value& dashed) {
      for (const std::string& v : variants) {
        fig::Series a, b;
        a.name = solid_name + ", " + v;
        b.name = dashed_name + ", " + v;
        b.dashed = true;
        for (std::size_t i = 0; i < cases.size(); ++i) {
          if (cases[i].variant != v || cases[i].m != cases[i].k) continue;
          const auto x = static_cast<double>(cases[i].m);
          for (auto [series, value] : {std::pair{&a, &solid}, std::pair{&b, &dashed}})
            if (const auto y = (*value)(i)) {
              series->x.push_back(x);
              series->y.push_back(*y);
            }
        }
        plot.series.push_back(std::move(a));
        plot.series.push_back(std::move(b));
      }
    };
    auto measured = [&](double Row::*field, bool util) -> Value {
      return [&rows, field, util](std::size_t i) -> std::optional<double> {
        if (!rows[i]) return std::nullopt;
        return util ? (*rows[i]).*field / rows[i]->composite * 100.0 : (*rows[i]).*field;
      };
    };
    // MAC utilisation: measured against the theoretical model, per variant.
    {
      fig::LinePlot plot;
      plot.title = "GEMM MAC utilization, theoretical vs measured";
      plot.x = shape_axis();
      plot.y = {"utilization (%)", false, 0.0, 100.0, 10, {}};
      per_variant(plot, "measured GEMM util", "theoretical GEMM util", measured(&Row::gemm, true),
                  [&](std::size_t i) -> std::optional<double> {
                    return theory(cases[i].m, cases[i].k, cases[i].n, cases[i].variant).gemm_util * 100.0;
                  });
      folder.figure("gemm_mac_utilization_theoretical_vs_measured.svg",
                    "The MAC array's duty cycle over the composite window: measured (solid) and the reference's "
                    "theoretical pipeline model (dashed)",
                    fig::svg(plot));
    }
    // Composite and kernel windows.
    {
      fig::LinePlot plot;
      plot.title = "GEMM composite and kernel windows";
      plot.x = shape_axis();
      plot.y = {"window (ns)", true, std::nullopt, std::nullopt, 10, {}};
      per_variant(plot, "composite window", "kernel window", measured(&Row::composite, false),
                  measured(&Row::kernel, false));
      folder.figure("gemm_windows.svg",
                    "Composite window (first to last tile-pipeline stage) and kernel window (the whole kernel, with "
                    "its up-front loads)",
                    fig::svg(plot));
    }
    folder.table("gemm_sweep.csv", std::move(table));
    folder.finish();

    Metrics& m = ctx.metrics();
    m.set("points", static_cast<std::uint64_t>(points.size()));
    m.set("failed", static_cast<std::uint64_t>(failed));
    if (p.get(kCalibration) && rows.back()) {
      Metrics& cal = m.object("calibration_32x3072x32_load_ref");
      cal.set("composite_window_ns", rows.back()->composite);
      cal.set("kernel_window_ns", rows.back()->kernel);
      cal.set("reference_composite_window_ns", 992.0);
      cal.set("reference_kernel_window_ns", 1765.0);
    }
    ctx.note(std::to_string(points.size()) + " points written as gemm_sweep.csv, 3 figures and index.html");
  }
};

}  // namespace

void add_milestone_gemm(PluginDescriptor& plugin) { add_bench<MilestoneGemm>(plugin); }

}  // namespace kbsim::milestone
