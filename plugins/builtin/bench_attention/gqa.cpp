// gqa-attention (docs/evaluations.md, "GQA attention"): one panel of the
// reference's GQA Llama-70B attention evaluation.
//
//   panel                 kernel              ranks                          S_q
//   single_user_prefill   attention-mesh-kv   the 8 PEs of cube 0 (axis 0)   16
//   multi_user_prefill    attention-mesh-kv   pe0 of cubes 0..3 (axis 1)     16
//   single_user_decode    attention-mesh-mlo  the 8 PEs of cube 0 (axis 0)    1
//   multi_user_decode     attention-mesh-mlo  pe0 of cubes 0..3 (axis 1)      1
//
// The model is one GQA group of Llama-70B's attention (64 query heads, 8 KV
// heads, head dim 128: 8 query heads share each KV head); the 8 groups of a
// layer are independent and alike. Its KV sequence (s_kv tokens) is split over
// the ranks; the query rows are S_q tokens x 8 heads. Scales: headline (head
// dim 128, s_kv 2048) and validation (head dim 64, s_kv 256).
//
// Metrics: the kernel latency, per-phase windows, and the op-log counts the
// reference reports (gemm, ipcq_send, ipcq_recv, dma_read, dma_write). With
// --verify-data every rank's output is checked against attention computed
// directly in double precision from the same f16 inputs.
#include <cmath>
#include <cstdio>
#include <map>

#include "kbsim/ahbm/names.hpp"
#include "kbsim/pe/ccl.hpp"
#include "kbsim/plugin.hpp"
#include "kbsim/rt/distributed.hpp"
#include "kbsim/rt/runtime.hpp"
#include "kbsim/tl/verify.hpp"

namespace kbsim::attention {

namespace {

struct Panel {
  const char* name;
  bool decode;
  int s_q;
  unsigned ranks;
  int axis;
};

constexpr Panel kPanels[] = {
    {"single_user_prefill", false, 16, 8, 0},
    {"multi_user_prefill", false, 16, 4, 1},
    {"single_user_decode", true, 1, 8, 0},
    {"multi_user_decode", true, 1, 4, 1},
};
constexpr unsigned kGroup = 64 / 8;  // Llama-70B: 64 query heads over 8 KV heads

constexpr StringParam kPanel{"panel", "single_user_decode",
                             "single_user_prefill, multi_user_prefill, single_user_decode or multi_user_decode"};
constexpr StringParam kScale{"scale", "headline", "headline (head dim 128, s_kv 2048) or validation (64, 256)"};
constexpr IntParam kSKv{"s_kv", 0, "KV sequence length (0: the scale's); a multiple of the rank count"};

/// Deterministic values in [-1, 1), exact in f16.
std::vector<double> values(std::int64_t n, std::uint32_t seed) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::uint32_t x = 0x9e3779b9u ^ (seed * 2654435761u);
  for (double& e : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    e = static_cast<double>(x % 256) / 128.0 - 1.0;
  }
  return v;
}

/// softmax(q k^T x scale) v for each of q's rows, in double precision.
std::vector<double> attention(const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
                              std::int64_t rows, std::int64_t s_kv, std::int64_t d, double scale) {
  std::vector<double> out(static_cast<std::size_t>(rows * d)), s(static_cast<std::size_t>(s_kv));
  for (std::int64_t i = 0; i < rows; ++i) {
    double mx = -1e300, sum = 0;
    for (std::int64_t j = 0; j < s_kv; ++j) {
      double dot = 0;
      for (std::int64_t c = 0; c < d; ++c) dot += q[i * d + c] * k[j * d + c];
      s[j] = dot * scale;
      mx = std::max(mx, s[j]);
    }
    for (std::int64_t j = 0; j < s_kv; ++j) sum += s[j] = std::exp(s[j] - mx);
    for (std::int64_t c = 0; c < d; ++c) {
      double acc = 0;
      for (std::int64_t j = 0; j < s_kv; ++j) acc += s[j] * v[j * d + c];
      out[i * d + c] = acc / sum;
    }
  }
  return out;
}

class GqaAttention final : public Bench {
 public:
  static BenchInfo info() {
    BenchInfo i{"gqa-attention",
                "one panel of the GQA Llama-70B attention evaluation: a GQA group's attention with its KV sequence "
                "split over an IPCQ ring of PEs (single_user) or cubes (multi_user), prefill or decode; reports "
                "latency and op-log counts",
                {kPanel, kScale, kSKv}};
    i.reads_op_log = true;
    i.splits = true;  // it drives the system through the host runtime only
    i.reads_topology = true;
    return i;
  }

  void run(BenchContext& ctx) override {
    const Params& p = ctx.params();
    const Panel* panel = nullptr;
    for (const Panel& x : kPanels)
      if (p.get(kPanel) == x.name) panel = &x;
    p.check(panel != nullptr, kPanel,
            "must be single_user_prefill, multi_user_prefill, single_user_decode or multi_user_decode");
    const std::string& scale_name = p.get(kScale);
    p.check(scale_name == "headline" || scale_name == "validation", kScale, "must be headline or validation");
    const bool headline = scale_name == "headline";
    const std::int64_t d = headline ? 128 : 64;
    const std::int64_t s_kv = p.get(kSKv) ? p.get(kSKv) : (headline ? 2048 : 256);
    const unsigned n = panel->ranks;
    p.check(s_kv > 0 && s_kv % n == 0 && s_kv <= 65536, kSKv,
            "must be a positive multiple of the panel's " + std::to_string(n) + " ranks, at most 65536");
    const std::int64_t rows = static_cast<std::int64_t>(panel->s_q) * kGroup;  // query rows: S_q tokens x 8 heads
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));

    System& sys = ctx.configured();
    auto& rt = sys.service<rt::Runtime>();
    auto& dist = sys.service<rt::Distributed>();
    if (panel->axis == 0 && rt.pes_per_cube() < n)
      throw BenchError("TOO_SMALL", std::string(panel->name) + " needs " + std::to_string(n) + " PEs per cube");
    if (panel->axis == 1 && rt.cubes_per_sip() < n)
      throw BenchError("TOO_SMALL", std::string(panel->name) + " needs " + std::to_string(n) + " cubes per SIP");

    // The ring: rank r sends "next" to rank r+1 (mod n) and receives from "prev".
    auto pe_of = [&](unsigned r) { return panel->axis == 0 ? ahbm::PeRef{0, 0, r} : ahbm::PeRef{0, r, 0}; };
    std::vector<ccl::Wire> wires;
    for (unsigned r = 0; r < n; ++r) {
      wires.push_back({pe_of(r), "next", pe_of((r + 1) % n)});
      wires.push_back({pe_of((r + 1) % n), "prev", pe_of(r)});
    }
    ccl::Config cfg = ccl::config(ctx);
    const std::uint64_t block = static_cast<std::uint64_t>(s_kv / n) * static_cast<std::uint64_t>(d) * 2;
    const std::uint64_t msg = panel->decode ? static_cast<std::uint64_t>(rows * d) * 2 : block;
    for (ParamEntry& e : cfg.algorithms.at(cfg.algorithm).params.entries()) {
      if (e.name == "slot_size" && std::get<std::int64_t>(e.value) < static_cast<std::int64_t>(msg))
        e.value = static_cast<std::int64_t>(msg);
      if (e.name == "n_slots" && std::get<std::int64_t>(e.value) < 3) e.value = std::int64_t{3};
    }
    dist.install_ipcq(wires, cfg);

    // Tensors: K and V split by rows over the ranks; Q split (prefill) or whole on every rank (decode).
    const rt::DPPolicy split = panel->axis == 0 ? rt::DPPolicy{rt::Split::kReplicate, rt::Split::kRowWise, n, 1}
                                                : rt::DPPolicy{rt::Split::kRowWise, rt::Split::kReplicate, 1, n};
    const rt::DPPolicy every = panel->axis == 0 ? rt::DPPolicy{rt::Split::kReplicate, rt::Split::kReplicate, n, 1}
                                                : rt::DPPolicy{rt::Split::kReplicate, rt::Split::kReplicate, 1, n};
    const std::vector<double> qv = values(rows * d, 1), kv = values(s_kv * d, 2), vv = values(s_kv * d, 3);
    rt::Tensor q = rt.from_host({rows, d}, DType::kF16, qv, panel->decode ? every : split, "Q");
    rt::Tensor k = rt.from_host({s_kv, d}, DType::kF16, kv, split, "K");
    rt::Tensor v = rt.from_host({s_kv, d}, DType::kF16, vv, split, "V");
    const std::int64_t out_rows = panel->decode ? rows * n : rows;  // decode: every rank writes the whole result
    rt::Tensor o = rt.empty({out_rows, d}, DType::kF16, split, "O");

    const char* kernel = panel->decode ? "attention-mesh-mlo" : "attention-mesh-kv";
    rt::LaunchOptions lo;
    lo.sip = 0;
    lo.grid_pes = panel->axis == 0 ? n : rt.pes_per_cube();
    lo.grid_cubes = panel->axis == 0 ? 1 : n;
    lo.auto_dim_remap = false;  // n is the rank count, not a dim (as the reference's panels launch)
    const rt::LaunchResult& res =
        rt.wait(rt.launch(kernel, {q, k, v, o, std::int64_t{n}, std::int64_t{panel->axis}, scale}, lo));

    Metrics& m = ctx.metrics();
    m.set("panel", std::string(panel->name));
    m.set("kernel", std::string(kernel));
    m.set("wiring", std::string(panel->axis == 0 ? "intracube_pe_ring" : "intercube_ring"));
    m.set("ranks", static_cast<std::uint64_t>(n));
    m.set("rank_axis", static_cast<std::int64_t>(panel->axis));
    m.set("s_q", static_cast<std::int64_t>(panel->s_q));
    m.set("s_kv", s_kv);
    m.set("head_dim", d);
    m.set("query_rows", rows);
    m.set("latency_ns", res.pe_exec_ns);
    m.set("launch_ns", ticks_to_ns(res.t_done - res.t_submit));
    std::map<std::string, std::uint64_t> counts{
        {"gemm", 0}, {"ipcq_send", 0}, {"ipcq_recv", 0}, {"dma_read", 0}, {"dma_write", 0}};
    if (const OpLogView* log = sys.op_log())
      for (const OpRecord& r : log->records()) {
        if (r.name.rfind("gemm_", 0) == 0 || r.name == "composite_gemm") ++counts["gemm"];
        if (r.name == "ipcq_copy") ++counts["ipcq_send"];  // one slot write per send, at the receiver
        if (r.name == "dma_read" || r.name == "dma_write") ++counts[r.name];
      }
    for (unsigned r = 0; r < n; ++r) {
      const ahbm::PeRef pe = pe_of(r);
      counts["ipcq_recv"] += sys.stat(ahbm::names::pe_part(pe.sip, pe.cube, pe.pe, "pe_ipcq"), "received").count;
    }
    Metrics& c = m.object("op_counts");
    for (const char* key : {"gemm", "ipcq_send", "ipcq_recv", "dma_read", "dma_write"}) c.set(key, counts[key]);
    char line[256];
    std::snprintf(line, sizeof line,
                  "%s: %u ranks, S_q %d, s_kv %lld, head dim %lld: %.1f ns; gemm %llu, ipcq_send %llu, ipcq_recv "
                  "%llu, dma_read %llu, dma_write %llu",
                  panel->name, n, panel->s_q, static_cast<long long>(s_kv), static_cast<long long>(d), res.pe_exec_ns,
                  static_cast<unsigned long long>(counts["gemm"]), static_cast<unsigned long long>(counts["ipcq_send"]),
                  static_cast<unsigned long long>(counts["ipcq_recv"]),
                  static_cast<unsigned long long>(counts["dma_read"]),
                  static_cast<unsigned long long>(counts["dma_write"]));
    ctx.note(line);
    if (panel->decode && counts["gemm"] != 2u * n)
      throw BenchError("GEMM_COUNT", std::string(panel->name) + " ran " + std::to_string(counts["gemm"]) +
                                         " GEMMs; decode runs exactly 2 per rank (" + std::to_string(2 * n) + ")");

    if (!verify::asked(ctx)) return;
    std::vector<double> qf(qv), kf(kv), vf(vv);
    for (auto* x : {&qf, &kf, &vf})
      for (double& e : *x) e = round_to(e, DType::kF16);
    const std::vector<double> want = attention(qf, kf, vf, rows, s_kv, d, round_to(scale, DType::kF16));
    const std::vector<double> got = rt.read_values(o);
    double worst = 0, peak = 0;
    std::size_t at = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double w = want[i % want.size()];  // decode: every rank's block holds the whole result
      peak = std::max(peak, std::abs(w));
      if (std::abs(got[i] - w) > worst) worst = std::abs(got[i] - w), at = i;
    }
    // f16 scores, probabilities and running sums carry about 3 significant digits.
    const double tol = 1e-2 * std::max(peak, 1e-3) + 2e-3;
    m.set("max_abs_error", worst);
    if (worst > tol) {
      char why[200];
      std::snprintf(why, sizeof why, "output element %zu is %.6f instead of %.6f (tolerance %.4f)", at, got[at],
                    want[at % want.size()], tol);
      throw BenchError("DATA_MISMATCH", std::string(panel->name) + ": " + why);
    }
    std::snprintf(line, sizeof line,
                  "verified: %zu output values within %.4f of attention computed directly (max error %.5f)", got.size(),
                  tol, worst);
    ctx.note(line);
  }
};

}  // namespace

void add_gqa(PluginDescriptor& plugin) { add_bench<GqaAttention>(plugin); }

}  // namespace kbsim::attention
