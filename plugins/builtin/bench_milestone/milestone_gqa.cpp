// milestone-gqa (docs/evaluations.md, "GQA attention"): the four panels of the
// reference's GQA Llama-70B attention evaluation (single/multi-user x
// prefill/decode), each a gqa-attention run, at the headline scale and the
// validation scale, as independent points. Writes gqa_panels.csv, one op-log
// figure per panel, the comparison of the panels, their latency, and index.html.
#include <cstdio>

#include "sweep_report.hpp"

namespace kbsim::milestone {

namespace {

const char* const kPanels[] = {"single_user_prefill", "multi_user_prefill", "single_user_decode", "multi_user_decode"};
const char* const kCounts[] = {"gemm", "ipcq_send", "ipcq_recv", "dma_read", "dma_write"};

constexpr StringParam kScales{"scales", "headline,validation",
                              "gqa-attention scales to run (the figures show the first)"};

class MilestoneGqa final : public Bench {
 public:
  static BenchInfo info() {
    BenchInfo i{"milestone-gqa",
                "the GQA Llama-70B attention milestone: the four gqa-attention panels at the headline and validation "
                "scales; writes gqa_panels.csv, op-log figures per panel, their comparison and index.html",
                {kScales}};
    i.reads_topology = true;  // its points run on the configured topology
    return i;
  }

  void run(BenchContext& ctx) override {
    const std::vector<std::string> scales = word_list(ctx.params(), kScales);
    for (const std::string& s : scales)
      ctx.params().check(s == "headline" || s == "validation", kScales,
                         "lists headline or validation ('" + s + "' is not)");
    std::vector<SweepPoint> points;
    for (const std::string& s : scales)
      for (const char* panel : kPanels)
        points.push_back({"gqa-attention", {std::string("panel=") + panel, "scale=" + s}, {}});
    const std::vector<PointResult> results = ctx.run_points(points);
    const std::size_t failed = note_failures(ctx, results);

    fig::Table table{"Panels", {"scale", "panel", "ranks", "s_q", "s_kv", "head_dim", "latency_ns"}, {}};
    for (const char* c : kCounts) table.header.push_back(c);
    table.header.push_back("status");
    for (std::size_t i = 0; i < points.size(); ++i) {
      const PointResult& r = results[i];
      std::vector<std::string> row{scales[i / 4], kPanels[i % 4]};
      for (const char* key : {"ranks", "s_q", "s_kv", "head_dim"}) {
        const auto v = r.metrics.number(key);
        row.push_back(v ? std::to_string(static_cast<long long>(*v)) : "");
      }
      char lat[32] = "";
      if (const auto v = r.metrics.number("latency_ns")) std::snprintf(lat, sizeof lat, "%.1f", *v);
      row.push_back(lat);
      for (const char* c : kCounts) {
        const auto v = r.metrics.number(std::string("op_counts.") + c);
        row.push_back(v ? std::to_string(static_cast<long long>(*v)) : "");
      }
      row.push_back(r.ok ? "ok" : r.error);
      table.rows.push_back(std::move(row));
    }

    const std::string& shown = scales.front();
    Folder folder(ctx, "kbsim GQA Llama-70B attention milestone",
                  "One GQA group of Llama-70B attention (8 query heads sharing a KV head; head dim 128 and a KV "
                  "sequence of 2048 tokens at the headline scale, head dim 64 and 256 tokens at the validation "
                  "scale), its KV sequence split over an IPCQ ring: the 8 PEs of a cube (single_user) or pe0 of 4 "
                  "cubes (multi_user). Prefill rotates K/V blocks; decode merges partial softmax (m, l, o) results. "
                  "Figures show the " +
                      shown + " scale.");
    fig::BarChart comparison;
    comparison.title = "GQA op-log comparison, " + shown;
    comparison.y = {"operations", false, 0.0, std::nullopt, 10, {}};
    comparison.value_labels = true;
    for (const char* c : kCounts) comparison.categories.push_back(c);
    fig::BarChart latency;
    latency.title = "GQA attention latency per panel";
    latency.y = {"kernel latency (ns)", true, std::nullopt, std::nullopt, 10, {}};
    latency.value_labels = true;
    for (const char* panel : kPanels) latency.categories.push_back(panel);
    for (std::size_t s = 0; s < scales.size(); ++s) {
      fig::BarChart::Group g{scales[s], {}, ""};
      for (std::size_t k = 0; k < 4; ++k)
        g.values.push_back(results[s * 4 + k].metrics.number("latency_ns").value_or(0));
      latency.groups.push_back(std::move(g));
    }
    for (std::size_t k = 0; k < 4; ++k) {
      const PointResult& r = results[k];
      fig::BarChart bars;
      bars.title = std::string("GQA op log, ") + kPanels[k];
      bars.y = {"operations", false, 0.0, std::nullopt, 10, {}};
      bars.value_labels = true;
      fig::BarChart::Group g{kPanels[k], {}, ""};
      for (const char* c : kCounts) {
        bars.categories.push_back(c);
        g.values.push_back(r.metrics.number(std::string("op_counts.") + c).value_or(0));
      }
      comparison.groups.push_back(g);
      bars.groups = {std::move(g)};
      folder.figure(std::string("gqa_op_log_") + kPanels[k] + ".svg",
                    std::string("Op-log counts of ") + kPanels[k] + " (" + shown + " scale)", fig::svg(bars));
    }
    folder.figure("gqa_comparison.svg", "The four panels' op-log counts side by side (" + shown + " scale)",
                  fig::svg(comparison));
    folder.figure("gqa_latency.svg", "Kernel latency of each panel, per scale", fig::svg(latency));
    folder.table("gqa_panels.csv", std::move(table));
    folder.finish();

    Metrics& m = ctx.metrics();
    m.set("points", static_cast<std::uint64_t>(points.size()));
    m.set("failed", static_cast<std::uint64_t>(failed));
    for (std::size_t i = 0; i < points.size(); ++i)
      if (const auto v = results[i].metrics.number("latency_ns")) m.object(scales[i / 4]).set(kPanels[i % 4], *v);
    ctx.note(std::to_string(points.size()) + " panels written as gqa_panels.csv, 6 figures and index.html");
  }
};

}  // namespace

void add_milestone_gqa(PluginDescriptor& plugin) { add_bench<MilestoneGqa>(plugin); }

}  // namespace kbsim::milestone
