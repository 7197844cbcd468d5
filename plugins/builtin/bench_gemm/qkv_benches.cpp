// QKV projection benches, the reference's legacy qkv_gemm, qkv_gemm_multi_pe
// and gpt3_qkv (docs/model.md, "Calibration: GEMM", the QKV benches paragraph):
//
//   qkv-gemm           Y = X x W_qkv on PE 0 of cube 0: load X and W, one GEMM
//                      command, store Y. The reference's M,K,N = 32,64,32 (one
//                      tile) is one GEMM: its tile count (128,256,128 = 64 tiles
//                      -> 32,64,32 = 1) counts one M x K x N product, so Q, K and V
//                      are the column ranges of one fused weight, not three GEMMs.
//   qkv-gemm-multi-pe  the same GEMM split by columns over PEs 0..pes-1 of cube 0:
//                      X replicated on each, W and Y column-wise; each PE finds
//                      its slices by program_id and multiplies them.
//   gpt3-qkv           a slice of GPT-3 175B's fused QKV projection (d_model 12288,
//                      heads of 128): M tokens onto `heads` heads' Q, K and V
//                      (N = 3 x heads x 128), K the full d_model, split by columns
//                      over the PEs of cube 0; each PE runs a composite GEMM with X
//                      loaded up front and W streamed per tile. The reference gives
//                      no dims; the whole layer (N = 36864) would need 906 MB of
//                      weights and ~5 GB of host memory to verify.
//
// Operands are f16. Metrics: the kernel window (the slowest PE's pe_exec_ns),
// the composite window (tiled runs), engine busy time per stage summed over the
// PEs, FLOPs, the achieved TFLOP/s and the GEMM engines' utilisation over the
// window. --verify-data reads Y back and checks it against X x W computed with
// Eigen (f32 accumulation of the f16 operands, f16 result).
#include "qkv_benches.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "host_operands.hpp"
#include "kbsim/host_memory.hpp"
#include "kbsim/pe/kernels.hpp"
#include "kbsim/pe/plan.hpp"
#include "kbsim/plugin.hpp"
#include "kbsim/rt/runtime.hpp"
#include "kbsim/tl/verify.hpp"

namespace {

namespace tl = kbsim::tl;
namespace rt = kbsim::rt;
using kbsim::DType;

constexpr std::int64_t kGpt3DModel = 12288;  // GPT-3 175B's hidden size
constexpr std::int64_t kGpt3HeadDim = 128;   // 96 heads of 128

// qkv-gemm's and qkv-gemm-multi-pe's parameters (the reference's reduced shape).
constexpr kbsim::IntParam kM{"M", 32, "rows of X and Y (tokens)"};
constexpr kbsim::IntParam kK{"K", 64, "columns of X, rows of W (model width)"};
constexpr kbsim::IntParam kN{"N", 32, "columns of W and Y (the fused Q, K and V outputs)"};
constexpr kbsim::IntParam kPes{"pes", 8, "PEs of cube 0 the columns are split over"};
// gpt3-qkv's.
constexpr kbsim::IntParam kTokens{"M", 32, "tokens (rows of X and Y)"};
constexpr kbsim::IntParam kHeads{"heads", 2, "attention heads projected: N = 3 x heads x 128 (K = d_model = 12288)"};

/// Each PE of the launch: Y's column slice = X x W's column slice (args X, W, Y, tiled). `tiled` runs a composite
/// GEMM with X loaded up front and W streamed per tile; otherwise load both, one GEMM command, store.
void qkv_gemm(tl::Program& tl, const tl::Args& args) {
  const auto cube = static_cast<unsigned>(tl.program_id(1)), pe = static_cast<unsigned>(tl.program_id(0));
  const tl::TensorArg &xa = args.tensor(0), &wa = args.tensor(1), &ya = args.tensor(2);
  const tl::TensorArg::Shard *x = xa.shard(cube, pe), *w = wa.shard(cube, pe), *y = ya.shard(cube, pe);
  if (!x || !w || !y) return;  // this PE holds no slice
  if (args.i64(3) == 0) {
    tl.store(y->ptr, tl.dot(tl.load(x->ptr, x->shape, xa.dtype), tl.load(w->ptr, w->shape, wa.dtype)));
    return;
  }
  tl::CompositeSpec spec;
  spec.a = tl.load(x->ptr, x->shape, xa.dtype);
  spec.b = tl.ref(w->ptr, w->shape, wa.dtype);
  spec.out_ptr = y->ptr;
  spec.out_dtype = ya.dtype;
  tl.wait(tl.composite(spec));
}

using kbsim::bench_gemm::operand;
using kbsim::bench_gemm::reference;
using kbsim::bench_gemm::values;

/// One run's shape and placement.
struct Job {
  std::int64_t m = 0, k = 0, n = 0;
  unsigned pes = 1;    ///< PEs of cube 0 the columns are split over
  bool tiled = false;  ///< composite GEMM (X up front, W streamed) instead of one GEMM command
};

enum class Kind { kSinglePe, kMultiPe, kGpt3 };

/// The job the parameters ask for, checked.
Job job_of(Kind kind, const kbsim::Params& p, unsigned pes_per_cube) {
  Job j;
  if (kind == Kind::kGpt3) {
    j = {p.get(kTokens), kGpt3DModel, 3 * kGpt3HeadDim * p.get(kHeads), 1, true};
    p.check(j.m > 0 && j.m <= 4096, kTokens, "must be in 1..4096");
    p.check(p.get(kHeads) > 0 && p.get(kHeads) <= 96, kHeads, "must be in 1..96 (GPT-3 175B has 96 heads)");
  } else {
    j = {p.get(kM), p.get(kK), p.get(kN), 1, false};
    p.check(j.m > 0 && j.m <= (1 << 16), kM, "must be in 1..65536");
    p.check(j.k > 0 && j.k <= (1 << 16), kK, "must be in 1..65536");
    p.check(j.n > 0 && j.n <= (1 << 16), kN, "must be in 1..65536");
  }
  if (kind != Kind::kSinglePe) {
    const std::int64_t pes = p.get(kPes);
    p.check(pes > 0 && pes <= static_cast<std::int64_t>(pes_per_cube) && pes <= j.n, kPes,
            "must be in 1..PEs per cube (" + std::to_string(pes_per_cube) + ") and at most N");
    j.pes = static_cast<unsigned>(pes);
  }
  return j;
}

class QkvBench : public kbsim::Bench {
 public:
  explicit QkvBench(Kind kind) : kind_(kind) {}

  void run(kbsim::BenchContext& ctx) override {
    rt::Runtime& r = ctx.configured().service<rt::Runtime>();
    const Job j = job_of(kind_, ctx.params(), r.pes_per_cube());
    r.on_devices(ctx, [&](kbsim::BenchContext& dev) {
      const rt::DPPolicy replicas{rt::Split::kReplicate, rt::Split::kReplicate, j.pes, 1};
      const rt::DPPolicy columns{rt::Split::kReplicate, rt::Split::kColumnWise, j.pes, 1};
      rt::Tensor x = r.empty({j.m, j.k}, DType::kF16, replicas, "X");
      rt::Tensor w = r.empty({j.k, j.n}, DType::kF16, columns, "W_qkv");
      rt::Tensor y = r.empty({j.m, j.n}, DType::kF16, columns, "Y");
      const double mk = static_cast<double>(j.m) * j.k, kn = static_cast<double>(j.k) * j.n;
      // Host-side: values (8 B) and their f16 encoding (2 B) of X, W and Y, and the store's copies (X once per PE).
      kbsim::require_memory(10.0 * (mk + kn + static_cast<double>(j.m) * j.n) + 2.0 * (j.pes * mk + kn),
                            "QKV operands " + shape_str(j));
      r.write(x, operand(j.m * j.k, 1));
      r.write(w, operand(j.k * j.n, 2));
      r.write(y, std::vector<std::byte>(static_cast<std::size_t>(j.m * j.n) * 2));  // f16 zeros
      const rt::LaunchResult& res = r.wait(r.launch("qkv_gemm", {x, w, y, std::int64_t{j.tiled}}));
      report(dev, res, j);
      if (kbsim::verify::asked(dev))
        kbsim::bench_gemm::check(dev, "Y", r.read(y),
                                 reference(values(j.m * j.k, 1), values(j.k * j.n, 2), j.m, j.k, j.n), y.shape());
    });
  }

 private:
  static std::string shape_str(const Job& j) {
    return std::to_string(j.m) + "x" + std::to_string(j.k) + "x" + std::to_string(j.n);
  }

  /// The slowest PE's composite window (first to last tile-pipeline stage), 0 without composites.
  static double composite_window(const rt::LaunchResult& res) {
    double window = 0;
    for (const kbsim::ahbm::PeResult& pe : res.pes)
      if (pe.composite_first <= pe.composite_last)
        window = std::max(window, kbsim::ticks_to_ns(pe.composite_last - pe.composite_first));
    return window;
  }

  void report(kbsim::BenchContext& ctx, const rt::LaunchResult& res, const Job& j) const {
    kbsim::Metrics& out = ctx.metrics();
    out.set("M", j.m);
    out.set("K", j.k);
    out.set("N", j.n);
    out.set("pes", static_cast<std::int64_t>(res.pes.size()));
    out.set("kernel_window_ns", res.pe_exec_ns);  // the slowest PE's
    if (j.tiled) out.set("composite_window_ns", composite_window(res));
    out.set("dma_ns", res.dma_ns);
    out.set("compute_ns", res.compute_ns);
    out.set("launch_ns", kbsim::ticks_to_ns(res.t_done - res.t_submit));
    std::array<double, kbsim::pe::kStageTypes> busy{};
    for (const kbsim::ahbm::PeResult& pe : res.pes)
      for (std::size_t s = 0; s < busy.size(); ++s) busy[s] += pe.stage_busy_ns[s];
    kbsim::Metrics& stages = out.object("stage_busy_ns");  // summed over the PEs
    for (std::size_t s = 0; s < busy.size(); ++s)
      stages.set(std::string(kbsim::pe::stage_name(static_cast<kbsim::pe::StageType>(s))), busy[s]);
    const double flops = 2.0 * static_cast<double>(j.m) * static_cast<double>(j.k) * static_cast<double>(j.n);
    const double window = res.pe_exec_ns, gemm = busy[static_cast<std::size_t>(kbsim::pe::StageType::kGemm)];
    out.set("flops", flops);
    out.set("gemm_tflops_in_kernel_window", window > 0 ? flops / window / 1e3 : 0.0);
    // The launched PEs' GEMM engines: the fraction of the kernel window they were busy.
    out.set("gemm_utilisation", window > 0 ? gemm / (window * static_cast<double>(res.pes.size())) : 0.0);
    char line[192];
    std::snprintf(line, sizeof line, "%s on %zu PE(s): kernel window %.2f ns, GEMM busy %.2f ns (summed), %.3f TFLOP/s",
                  shape_str(j).c_str(), res.pes.size(), window, gemm, window > 0 ? flops / window / 1e3 : 0.0);
    ctx.note(line);
  }

  Kind kind_;
};

/// BenchInfo with the flags every QKV bench shares.
kbsim::BenchInfo info_of(std::string name, std::string summary, std::vector<kbsim::ParamSpec> params) {
  kbsim::BenchInfo i{std::move(name), std::move(summary), std::move(params)};
  i.splits = true;  // it drives the system through the host runtime and statistics only
  i.reads_topology = true;
  return i;
}

class QkvGemm final : public QkvBench {
 public:
  QkvGemm() : QkvBench(Kind::kSinglePe) {}
  static kbsim::BenchInfo info() {
    return info_of("qkv-gemm",
                   "The reference's QKV projection Y = X x W_qkv (one fused GEMM, 32x64x32) on PE 0 of cube 0",
                   {kM, kK, kN});
  }
};

class QkvGemmMultiPe final : public QkvBench {
 public:
  QkvGemmMultiPe() : QkvBench(Kind::kMultiPe) {}
  static kbsim::BenchInfo info() {
    return info_of("qkv-gemm-multi-pe",
                   "qkv-gemm split by columns over cube 0's PEs: each PE finds its W and Y slices by program_id",
                   {kM, kK, kN, kPes});
  }
};

class Gpt3Qkv final : public QkvBench {
 public:
  Gpt3Qkv() : QkvBench(Kind::kGpt3) {}
  static kbsim::BenchInfo info() {
    return info_of("gpt3-qkv",
                   "A GPT-3 175B QKV slice: M tokens x d_model 12288 onto `heads` heads' Q, K, V (N = 3 x heads x "
                   "128; default 32x12288x768), composite GEMMs split by columns over cube 0's PEs",
                   {kTokens, kHeads, kPes});
  }
};

}  // namespace

void kbsim::bench_gemm::add_qkv_benches(kbsim::PluginDescriptor& plugin) {
  kbsim::add_bench<QkvGemm>(plugin);
  kbsim::add_bench<QkvGemmMultiPe>(plugin);
  kbsim::add_bench<Gpt3Qkv>(plugin);
  kbsim::add_kernel(plugin, "qkv_gemm", &qkv_gemm,
                    "each PE: its column slice of Y = X x its column slice of W (args X, W, Y, tiled); tiled runs a "
                    "composite GEMM, X loaded up front and W streamed per tile");
}
