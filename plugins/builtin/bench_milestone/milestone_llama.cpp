// milestone-llama (docs/evaluations.md, "A decoder layer"): llama-layer (the
// Python bench) over the SIPs used and the KV context for a decode step, and
// over the prompt length for prefill, as independent points, each on a system
// of as many SIPs as it uses. Writes llama_points.csv, the decode latency and
// tokens/s against SIPs, prefill latency against the prompt, the per-phase
// breakdown and the roofline (each phase's time against its bound), index.html.
#include <cstdio>

#include "sweep_report.hpp"

namespace kbsim::milestone {

namespace {

const char* const kPhases[] = {"norm1", "qkv", "attention",  "out_proj", "allreduce1",
                               "norm2", "mlp", "allreduce2", "residual"};

constexpr StringParam kSips{"sips", "1,2,4,8,16", "SIPs used (tensor-parallel degrees) of the decode points"};
constexpr StringParam kContexts{"contexts", "1024,4096,16384", "decode: KV context lengths"};
constexpr StringParam kSeqs{"seqs", "16,32,64,128", "prefill: prompt lengths (on the smallest SIP count above 1)"};
constexpr StringParam kPrefillAlgorithms{"prefill_algorithms", "lrab_hierarchical_allreduce,ring_allreduce",
                                         "prefill: the all_reduce algorithms compared (ccl.algorithm)"};
constexpr IntParam kFocus{"focus_context", 4096, "the context of the breakdown and roofline figures"};

struct Point {
  bool decode = true;
  std::int64_t sips = 1, len = 0;  ///< len: context (decode) or prompt (prefill)
  std::string algorithm;           ///< the all_reduce's (empty: the configured one)
};

double num(const PointResult& r, const std::string& key) { return r.metrics.number(key).value_or(0.0); }

class MilestoneLlama final : public Bench {
 public:
  static BenchInfo info() {
    BenchInfo i{"milestone-llama",
                "a Llama-70B decoder layer (llama-layer) over 1-16 SIPs and the KV context (decode) and the prompt "
                "(prefill); writes llama_points.csv, latency, tokens/s, per-phase and roofline figures, index.html",
                {kSips, kContexts, kSeqs, kPrefillAlgorithms, kFocus}};
    i.reads_topology = true;  // its points run on the configured topology, with their SIP count set
    return i;
  }

  void run(BenchContext& ctx) override {
    const Params& p = ctx.params();
    std::vector<std::int64_t> sips, contexts, seqs;
    for (auto [param, out] : {std::pair{&kSips, &sips}, {&kContexts, &contexts}, {&kSeqs, &seqs}})
      for (const std::string& w : word_list(p, *param)) {
        char* end = nullptr;
        const long long v = std::strtoll(w.c_str(), &end, 10);
        p.check(end && *end == '\0' && v >= 1, *param, "lists positive integers ('" + w + "' is not)");
        out->push_back(v);
      }
    const std::int64_t focus = p.get(kFocus);
    std::vector<Point> cases;
    std::vector<SweepPoint> points;
    auto add = [&](Point c) {
      std::vector<std::string> set{"system.sips.count=" + std::to_string(c.sips)};
      if (!c.algorithm.empty()) set.push_back("ccl.algorithm=" + c.algorithm);
      points.push_back({"llama-layer",
                        {std::string("phase=") + (c.decode ? "decode" : "prefill"), "tp=" + std::to_string(c.sips),
                         (c.decode ? "context=" : "seq=") + std::to_string(c.len)},
                        std::move(set)});
      cases.push_back(std::move(c));
    };
    for (std::int64_t ctx_len : contexts)
      for (std::int64_t s : sips) add({true, s, ctx_len, ""});
    std::int64_t prefill_sips = 1;
    for (std::int64_t s : sips)
      if (s > 1 && (prefill_sips == 1 || s < prefill_sips)) prefill_sips = s;
    const std::vector<std::string> algorithms = word_list(p, kPrefillAlgorithms);
    for (const std::string& a : algorithms)
      for (std::int64_t s : seqs) add({false, prefill_sips, s, a});
    const std::vector<PointResult> results = ctx.run_points(points);
    const std::size_t failed = note_failures(ctx, results);

    fig::Table table{"Points",
                     {"phase", "sips", "context", "seq", "algorithm", "latency_ns", "tokens_per_s", "hbm_gbs",
                      "hbm_peak_gbs", "gemm_util"},
                     {}};
    for (const char* ph : kPhases) table.header.push_back(std::string(ph) + "_ns");
    table.header.push_back("status");
    auto fmt = [](double v, const char* f) {
      char b[48];
      std::snprintf(b, sizeof b, f, v);
      return std::string(b);
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const Point& c = cases[i];
      const PointResult& r = results[i];
      std::vector<std::string> row{c.decode ? "decode" : "prefill", std::to_string(c.sips),
                                   c.decode ? std::to_string(c.len) : "", c.decode ? "" : std::to_string(c.len),
                                   c.algorithm};
      for (const char* k : {"latency_ns", "tokens_per_s", "hbm_gbs", "hbm_peak_gbs"})
        row.push_back(r.ok ? fmt(num(r, k), "%.1f") : "");
      row.push_back(r.ok ? fmt(num(r, "gemm_util"), "%.4f") : "");
      for (const char* ph : kPhases) row.push_back(r.ok ? fmt(num(r, std::string("phases.") + ph), "%.1f") : "");
      row.push_back(r.ok ? "ok" : r.error);
      table.rows.push_back(std::move(row));
    }

    Folder folder(ctx, "kbsim Llama-70B decoder layer milestone",
                  "One Llama-70B decoder layer (hidden 8192, 64 query heads and 8 KV heads of 128, SwiGLU 28672, "
                  "f16) with Megatron's tensor parallelism over the SIPs, each point a llama-layer run on a system "
                  "of that many SIPs (the default topology's ring). Decode is one token per sequence against a KV "
                  "cache of the given context; prefill writes the cache for a prompt. Phase edges are barriers "
                  "across the ranks, so the phases add up to the latency.");
    fig::Axis sips_axis{"SIPs (tensor-parallel degree)", true, std::nullopt, std::nullopt, 2, {}};
    fig::LinePlot lat{"decode step latency against SIPs",
                      sips_axis,
                      {"latency (µs)", true, std::nullopt, std::nullopt, 10, {}},
                      {},
                      {},
                      {}};
    fig::LinePlot tps{"decode tokens/s against SIPs (batch 1)",
                      sips_axis,
                      {"tokens/s", true, std::nullopt, std::nullopt, 10, {}},
                      {},
                      {},
                      {}};
    for (std::int64_t ctx_len : contexts) {
      fig::Series l, t;
      l.name = t.name = "context " + std::to_string(ctx_len);
      for (std::size_t i = 0; i < cases.size(); ++i)
        if (cases[i].decode && cases[i].len == ctx_len && results[i].ok) {
          l.x.push_back(static_cast<double>(cases[i].sips));
          l.y.push_back(num(results[i], "latency_ns") / 1000.0);
          t.x.push_back(static_cast<double>(cases[i].sips));
          t.y.push_back(num(results[i], "tokens_per_s"));
        }
      lat.series.push_back(std::move(l));
      tps.series.push_back(std::move(t));
    }
    fig::LinePlot pre{"prefill latency against the prompt, " + std::to_string(prefill_sips) + " SIPs",
                      {"prompt (tokens)", true, std::nullopt, std::nullopt, 2, {}},
                      {"latency (µs)", true, std::nullopt, std::nullopt, 10, {}},
                      {},
                      {},
                      {}};
    for (const std::string& a : algorithms) {
      fig::Series ps;
      ps.name = "all_reduce " + a;
      for (std::size_t i = 0; i < cases.size(); ++i)
        if (!cases[i].decode && cases[i].algorithm == a && results[i].ok) {
          ps.x.push_back(static_cast<double>(cases[i].len));
          ps.y.push_back(num(results[i], "latency_ns") / 1000.0);
        }
      pre.series.push_back(std::move(ps));
    }

    // Where the time goes: the phases of each decode point at the focus context, stacked.
    fig::BarChart stack;
    stack.title = "decode step per phase, context " + std::to_string(focus);
    stack.y = {"critical path (µs)", false, 0.0, std::nullopt, 10, {}};
    stack.stacked = true;
    std::vector<std::size_t> focus_points;
    for (std::size_t i = 0; i < cases.size(); ++i)
      if (cases[i].decode && cases[i].len == focus && results[i].ok) {
        focus_points.push_back(i);
        stack.categories.push_back(std::to_string(cases[i].sips) + " SIPs");
      }
    for (const char* ph : kPhases) {
      fig::BarChart::Group g{ph, {}, ""};
      for (std::size_t i : focus_points) g.values.push_back(num(results[i], std::string("phases.") + ph) / 1000.0);
      stack.groups.push_back(std::move(g));
    }
    // The roofline: each phase's simulated time over its lower bound from the configured peaks.
    fig::BarChart roof;
    roof.title = "roofline: each phase's time over its bound (decode, context " + std::to_string(focus) + ")";
    roof.y = {"simulated / bound (1 = at the roofline)", true, std::nullopt, std::nullopt, 10, {}};
    for (const char* ph : kPhases) roof.categories.push_back(ph);
    for (std::size_t i : focus_points) {
      fig::BarChart::Group g{std::to_string(cases[i].sips) + " SIPs", {}, ""};
      for (const char* ph : kPhases) g.values.push_back(num(results[i], std::string("phase_detail.") + ph + ".ratio"));
      roof.groups.push_back(std::move(g));
    }
    folder.figure("llama_decode_latency.svg", "Decode step latency against the SIPs used, per KV context",
                  fig::svg(lat));
    folder.figure("llama_decode_tokens.svg", "Decode tokens/s (batch 1) against the SIPs used", fig::svg(tps));
    folder.figure("llama_prefill_latency.svg",
                  "Prefill latency against the prompt length, per all_reduce algorithm (buckets of 128 KiB per cube)",
                  fig::svg(pre));
    folder.figure("llama_phases.svg", "Where a decode step's time goes, per SIP count (critical path per phase)",
                  fig::svg(stack));
    folder.figure("llama_roofline.svg",
                  "Each phase's simulated time over its roofline bound (compute or HBM from the configured peaks; "
                  "never below 1)",
                  fig::svg(roof));
    folder.table("llama_points.csv", std::move(table));
    folder.finish();

    Metrics& m = ctx.metrics();
    m.set("points", static_cast<std::uint64_t>(points.size()));
    m.set("failed", static_cast<std::uint64_t>(failed));
    for (std::size_t i = 0; i < cases.size(); ++i)
      if (results[i].ok)
        m.object(cases[i].decode ? "decode_latency_ns" : "prefill_latency_ns")
            .object(cases[i].decode ? std::to_string(cases[i].sips) + "_sips" : cases[i].algorithm)
            .set(std::to_string(cases[i].len), num(results[i], "latency_ns"));
    ctx.note(std::to_string(points.size()) + " points written as llama_points.csv, 5 figures and index.html");
  }
};

}  // namespace

void add_milestone_llama(PluginDescriptor& plugin) { add_bench<MilestoneLlama>(plugin); }

}  // namespace kbsim::milestone
