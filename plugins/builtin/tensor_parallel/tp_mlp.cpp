// tp-mlp (docs/model.md, "Tensor parallelism"): the reference's tensor-parallel
// MLP, fc1 = ColumnParallelLinear(D_in -> D_hidden) and fc2 =
// RowParallelLinear(D_hidden -> D_out), over every rank of the process group
// (one per SIP), forward only, f16. Weights and input are deterministic and
// non-zero; --verify-data checks every rank's output against the same MLP
// computed directly (Eigen: f16 operands, f32 accumulation, the hidden layer
// rounded to f16 as it is stored).
#include <Eigen/Core>
#include <cmath>
#include <cstdio>

#include "kbsim/plugin.hpp"
#include "kbsim/rt/tensor_parallel.hpp"
#include "kbsim/tl/verify.hpp"

namespace kbsim::tensor_parallel {

namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Small values k/64 with k in -8..8 (exact in f16), varied by position and salt.
double value(std::int64_t i, std::int64_t salt) { return static_cast<double>((i * 7 + salt * 13) % 17 - 8) / 64.0; }

float f16(double v) { return static_cast<float>(round_to(v, DType::kF16)); }

constexpr IntParam kB{"B", 1, "batch rows"};
constexpr IntParam kDIn{"D_in", 512, "input features"};
constexpr IntParam kDHidden{"D_hidden", 2048, "hidden features (split over the ranks by fc1's columns and fc2's rows)"};
constexpr IntParam kDOut{"D_out", 512, "output features"};

class TpMlp final : public Bench {
 public:
  static BenchInfo info() {
    BenchInfo i{
        "tp-mlp",
        "Megatron tensor-parallel MLP: ColumnParallelLinear then RowParallelLinear (all_reduce) over every rank; "
        "--verify-data checks the output against the MLP computed directly",
        {kB, kDIn, kDHidden, kDOut}};
    i.splits = true;  // it drives the system through the host runtime only
    i.reads_topology = true;
    return i;
  }

  void run(BenchContext& ctx) override {
    const Params& p = ctx.params();
    const std::int64_t b = p.get(kB), din = p.get(kDIn), dh = p.get(kDHidden), dout = p.get(kDOut);
    for (const IntParam* k : {&kB, &kDIn, &kDHidden, &kDOut})
      p.check(p.get(*k) >= 1 && p.get(*k) <= 65536, *k, "must be in 1..65536");
    System& sys = ctx.configured();
    auto& rt = sys.service<rt::Runtime>();
    auto& dist = sys.service<rt::Distributed>();
    dist.init_process_group(ccl::config(ctx));
    const unsigned ws = dist.get_world_size();
    p.check(dh % ws == 0, kDHidden, "must be a multiple of the world size " + std::to_string(ws));
    rt::tp::ParallelState state(dist);

    // The whole model, as the host knows it: x (B, D_in), W1 (D_in, D_hidden), W2 (D_hidden, D_out).
    std::vector<double> x(static_cast<std::size_t>(b * din)), w1(static_cast<std::size_t>(din * dh)),
        w2(static_cast<std::size_t>(dh * dout));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = value(static_cast<std::int64_t>(i), 1);
    for (std::size_t i = 0; i < w1.size(); ++i) w1[i] = value(static_cast<std::int64_t>(i), 2);
    for (std::size_t i = 0; i < w2.size(); ++i) w2[i] = value(static_cast<std::int64_t>(i), 3);
    const std::int64_t k = dh / ws;
    std::vector<std::vector<double>> out(ws);
    std::vector<double> fc1_ns(ws), fc2_ns(ws), total_ns(ws);
    dist.spawn(
        [&](unsigned rank) {
          rt.set_device(rank);
          state.initialize_model_parallel(ws);
          rt::tp::ColumnParallelLinear fc1(rt, state, din, dh);
          rt::tp::RowParallelLinear fc2(rt, state, dh, dout);
          std::vector<double> s1(static_cast<std::size_t>(din * k)), s2(static_cast<std::size_t>(k * dout));
          for (std::int64_t r = 0; r < din; ++r)  // fc1: this rank's columns of W1
            for (std::int64_t c = 0; c < k; ++c) s1[r * k + c] = w1[r * dh + rank * k + c];
          for (std::int64_t r = 0; r < k; ++r)  // fc2: this rank's rows of W2
            for (std::int64_t c = 0; c < dout; ++c) s2[r * dout + c] = w2[(rank * k + r) * dout + c];
          fc1.load_weight(s1);
          fc2.load_weight(s2);
          const rt::Tensor input = rt.from_host({b, din}, DType::kF16, x, rt::tp::kEveryPe, "x");
          dist.barrier();  // every rank's weights and input are in place: the layers start together
          const Tick t0 = rt.now();
          const rt::Tensor h = fc1.forward(rt::tp::copy_to_tp_region(input));
          const rt::Tensor y = fc2.forward(h);
          fc1_ns[rank] = fc1.last_launch().pe_exec_ns;
          fc2_ns[rank] = fc2.last_launch().pe_exec_ns;
          total_ns[rank] = ticks_to_ns(rt.now() - t0);
          if (!verify::asked(ctx)) return;
          std::vector<double> all = rt.read_values(y);
          out[rank].assign(all.begin(), all.begin() + b * dout);  // every cube's row holds the whole output
        },
        ws);

    const rt::CollectiveResult& ar = dist.collectives().at(0);
    double crit = 0;
    for (const rt::LaunchResult& l : ar.ranks) crit = std::max(crit, l.pe_exec_ns);
    Metrics& m = ctx.metrics();
    m.set("world_size", static_cast<std::uint64_t>(ws));
    m.set("fc1_gemm_ns", *std::max_element(fc1_ns.begin(), fc1_ns.end()));
    m.set("fc2_partial_gemm_ns", *std::max_element(fc2_ns.begin(), fc2_ns.end()));
    m.set("allreduce_crit_ns", crit);
    m.set("forward_ns", *std::max_element(total_ns.begin(), total_ns.end()));
    m.set("allreduce_algorithm", ar.algorithm);
    char line[300];
    std::snprintf(line, sizeof line,
                  "tp_mlp: %u ranks, (%lld, %lld) -> (%lld, %lld) -> (%lld, %lld): fc1 GEMM %.1f ns, fc2 partial GEMM "
                  "%.1f ns, all_reduce %.1f ns, forward %.1f ns",
                  ws, static_cast<long long>(b), static_cast<long long>(din), static_cast<long long>(b),
                  static_cast<long long>(dh), static_cast<long long>(b), static_cast<long long>(dout),
                  m.number("fc1_gemm_ns").value_or(0), m.number("fc2_partial_gemm_ns").value_or(0), crit,
                  m.number("forward_ns").value_or(0));
    ctx.note(line);
    if (!verify::asked(ctx)) return;

    Matrix mx(b, din), m1(din, dh), m2(dh, dout);
    for (std::size_t i = 0; i < x.size(); ++i) mx.data()[i] = f16(x[i]);
    for (std::size_t i = 0; i < w1.size(); ++i) m1.data()[i] = f16(w1[i]);
    for (std::size_t i = 0; i < w2.size(); ++i) m2.data()[i] = f16(w2[i]);
    Matrix h = mx * m1;
    for (Eigen::Index i = 0; i < h.size(); ++i) h.data()[i] = f16(h.data()[i]);
    const Matrix want = h * m2;
    // The device sums the output as f16 partials (a cube's PEs, then the cubes and ranks in the all_reduce):
    // each addition rounds to half an f16 unit in the last place of the running sum; allow 4 such units.
    double peak = 0, worst = 0;
    for (Eigen::Index i = 0; i < want.size(); ++i) peak = std::max(peak, std::abs(static_cast<double>(want.data()[i])));
    const double ulp = std::ldexp(1.0, std::ilogb(std::max(peak, 1e-3)) - 10);
    const double tol = 4 * ulp + 1e-3;
    std::string first;
    for (unsigned r = 0; r < ws; ++r)
      for (Eigen::Index i = 0; i < want.size(); ++i) {
        const double e = std::abs(out[r][static_cast<std::size_t>(i)] - want.data()[i]);
        worst = std::max(worst, e);
        if (e > tol && first.empty())
          first = "rank " + std::to_string(r) + " output " + std::to_string(i) + " is " +
                  std::to_string(out[r][static_cast<std::size_t>(i)]) + " instead of " + std::to_string(want.data()[i]);
      }
    m.set("max_abs_error", worst);
    if (!first.empty()) throw BenchError("DATA_MISMATCH", "tp-mlp: " + first);
    std::snprintf(line, sizeof line,
                  "verified: every rank's %lld outputs within %.4f of the MLP computed directly (max error %.5f)",
                  static_cast<long long>(b) * dout, tol, worst);
    ctx.note(line);
  }
};

}  // namespace

void add_tp_mlp(PluginDescriptor& plugin) { add_bench<TpMlp>(plugin); }

}  // namespace kbsim::tensor_parallel
