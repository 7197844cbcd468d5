// GEMM benches on one PE of an AHBM system (docs/model.md,
// "Calibration: GEMM"):
//
//   gemm-single-pe    load A and B into TCM, one GEMM command, store C
//   matmul-composite  a composite (tiled) GEMM; `variant` stages the operands:
//                     load_ref  A loaded up front (pinned), B streamed per tile
//                     pinned    both loaded up front
//                     ref_ref   both streamed per tile
//                    and `epilogue=relu` fuses a relu into every output tile
//
// A (M,K), B (K,N) and C (M,N) are f16 tensors in PE0's HBM slice of cube 0,
// written from the host first. Metrics: the kernel window (pe_exec_ns), the
// composite window (first to last tile-pipeline stage), engine busy time per
// stage, the DMA and compute totals and the scheduler's tile count.
// With --verify-data, C is read back after the data pass and checked against
// A x B computed directly with Eigen (f32 accumulation of the f16 operands).
#include <cstdio>
#include <cstring>
#include <string>

#include "host_operands.hpp"
#include "kbsim/ahbm/names.hpp"
#include "kbsim/host_memory.hpp"
#include "kbsim/pe/kernels.hpp"
#include "kbsim/pe/plan.hpp"
#include "kbsim/plugin.hpp"
#include "kbsim/rt/runtime.hpp"
#include "kbsim/tl/verify.hpp"
#include "qkv_benches.hpp"

namespace {

namespace tl = kbsim::tl;
namespace rt = kbsim::rt;
using kbsim::DType;

enum Variant : std::int64_t { kLoadRef = 0, kPinned = 1, kRefRef = 2 };

// gemm-single-pe's parameters.
constexpr kbsim::IntParam kSinglePeM{"M", 64, "rows of A and C"};
constexpr kbsim::IntParam kSinglePeK{"K", 64, "columns of A, rows of B"};
constexpr kbsim::IntParam kSinglePeN{"N", 64, "columns of B and C"};
// matmul-composite's: the same shape, other defaults, and the composite's options.
constexpr kbsim::IntParam kCompositeM{"M", 32, "rows of A and C"};
constexpr kbsim::IntParam kCompositeK{"K", 3072, "columns of A, rows of B"};
constexpr kbsim::IntParam kCompositeN{"N", 32, "columns of B and C"};
constexpr kbsim::StringParam kVariant{"variant", "load_ref", "operand staging: load_ref, pinned or ref_ref"};
constexpr kbsim::StringParam kEpilogue{"epilogue", "none", "fused output-tile epilogue: none or relu"};

void gemm_single_pe(tl::Program& tl, const tl::Args& args) {
  const tl::TensorArg &a = args.tensor(0), &b = args.tensor(1), &c = args.tensor(2);
  tl::Tensor ta = tl.load(a.ptr, a.shape, a.dtype);
  tl::Tensor tb = tl.load(b.ptr, b.shape, b.dtype);
  tl.store(c.ptr, tl.dot(ta, tb));
}

void matmul_composite(tl::Program& tl, const tl::Args& args) {
  const tl::TensorArg &a = args.tensor(0), &b = args.tensor(1), &c = args.tensor(2);
  const std::int64_t variant = args.i64(3);
  tl::CompositeSpec spec;
  spec.a = variant == kRefRef ? tl.ref(a.ptr, a.shape, a.dtype) : tl.load(a.ptr, a.shape, a.dtype);
  spec.b = variant == kPinned ? tl.load(b.ptr, b.shape, b.dtype) : tl.ref(b.ptr, b.shape, b.dtype);
  spec.out_ptr = c.ptr;
  spec.out_dtype = c.dtype;
  if (args.size() > 4 && args.i64(4)) spec.epilogue = {{tl::MathOp::kRelu, tl::Scope::kOutputTile, 1.0, {}}};
  tl.wait(tl.composite(spec));
}

using kbsim::bench_gemm::operand;
using kbsim::bench_gemm::reference;
using kbsim::bench_gemm::values;

class GemmBench : public kbsim::Bench {
 public:
  explicit GemmBench(bool composite) : composite_(composite) {}

  void run(kbsim::BenchContext& ctx) override {
    const kbsim::Params& p = ctx.params();
    const kbsim::IntParam& pm = composite_ ? kCompositeM : kSinglePeM;
    const kbsim::IntParam& pk = composite_ ? kCompositeK : kSinglePeK;
    const kbsim::IntParam& pn = composite_ ? kCompositeN : kSinglePeN;
    const std::int64_t m = p.get(pm), k = p.get(pk), n = p.get(pn);
    p.check(m > 0 && m <= (1 << 24), pm, "must be in 1..16777216");
    p.check(k > 0 && k <= (1 << 24), pk, "must be in 1..16777216");
    p.check(n > 0 && n <= (1 << 24), pn, "must be in 1..16777216");
    std::int64_t variant = kLoadRef;
    bool relu = false;
    if (composite_) {
      const std::string& v = p.get(kVariant);
      variant = v == "load_ref"  ? std::int64_t{kLoadRef}
                : v == "pinned"  ? std::int64_t{kPinned}
                : v == "ref_ref" ? std::int64_t{kRefRef}
                                 : -1;
      p.check(variant >= 0, kVariant, "must be load_ref, pinned or ref_ref");
      const std::string& e = p.get(kEpilogue);
      p.check(e == "none" || e == "relu", kEpilogue, "must be none or relu");
      relu = e == "relu";
    }
    rt::Runtime& r = ctx.configured().service<rt::Runtime>();
    r.on_devices(ctx, [&](kbsim::BenchContext& dev) {
      const rt::DPPolicy one_pe;  // replicate on PE 0 of cube 0
      // Place all three first, so a shape too large for the PE's HBM slice fails before any data is made.
      rt::Tensor a = r.empty({m, k}, DType::kF16, one_pe, "A");
      rt::Tensor b = r.empty({k, n}, DType::kF16, one_pe, "B");
      rt::Tensor c = r.empty({m, n}, DType::kF16, one_pe, "C");
      // Host-side operands at most: their f16 encoding (2 B an element), kept once more by the memory store (2 B),
      // and, when the data is verified, the values the reference computes with (8 B), for A, B and C.
      const double elements = static_cast<double>(m) * static_cast<double>(k) + static_cast<double>(k) * n +
                              static_cast<double>(m) * static_cast<double>(n);
      kbsim::require_memory(12.0 * elements,
                            std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) + " GEMM operands");
      r.write(a, operand(m * k, 1));
      r.write(b, operand(k * n, 2));
      r.write(c, std::vector<std::byte>(static_cast<std::size_t>(m * n) * 2));  // f16 zeros
      std::vector<rt::Arg> args;
      args.reserve(5);
      for (const rt::Tensor& t : {a, b, c}) args.emplace_back(t);
      if (composite_) {
        args.emplace_back(variant);
        args.emplace_back(std::int64_t{relu});
      }
      const rt::LaunchResult& res = r.wait(r.launch(composite_ ? "matmul_composite" : "gemm_single_pe", args));
      report(dev, res, m, k, n);
      if (kbsim::verify::asked(dev))
        kbsim::bench_gemm::check(dev, "C", r.read(c), reference(values(m * k, 1), values(k * n, 2), m, k, n, relu),
                                 c.shape());
    });
  }

 private:
  void report(kbsim::BenchContext& ctx, const rt::LaunchResult& res, std::int64_t m, std::int64_t k,
              std::int64_t n) const {
    const kbsim::ahbm::PeResult& pe = res.pes.at(0);
    kbsim::Metrics& out = ctx.metrics();
    out.set("M", m);
    out.set("K", k);
    out.set("N", n);
    out.set("kernel_window_ns", pe.pe_exec_ns);
    const bool any_composite = pe.composite_first <= pe.composite_last;
    const double window = any_composite ? kbsim::ticks_to_ns(pe.composite_last - pe.composite_first) : 0.0;
    if (composite_) out.set("composite_window_ns", window);
    out.set("dma_ns", pe.dma_ns);
    out.set("compute_ns", pe.compute_ns);
    kbsim::Metrics& stages = out.object("stage_busy_ns");
    for (std::size_t s = 0; s < pe.stage_busy_ns.size(); ++s)
      stages.set(std::string(kbsim::pe::stage_name(static_cast<kbsim::pe::StageType>(s))), pe.stage_busy_ns[s]);
    out.set("commands", pe.commands);
    // Tiles the PE's scheduler fed to composite commands (a simple command is one tile).
    const std::string sched = kbsim::ahbm::names::pe_part(0, 0, 0, "pe_scheduler");
    kbsim::System& sys = ctx.configured();
    out.set("composite_tiles", sys.stat(sched, "tiles").count -
                                   (sys.stat(sched, "commands").count - sys.stat(sched, "composite_commands").count));
    out.set("launch_ns", kbsim::ticks_to_ns(res.t_done - res.t_submit));
    const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
    out.set("gemm_tflops_in_kernel_window", pe.pe_exec_ns > 0 ? flops / pe.pe_exec_ns / 1e3 : 0.0);
    char composite[64] = "", line[192];
    if (composite_) std::snprintf(composite, sizeof composite, ", composite window %.2f ns", window);
    std::snprintf(line, sizeof line, "%lldx%lldx%lld: kernel window %.2f ns%s, GEMM busy %.2f ns, DMA %.2f ns",
                  static_cast<long long>(m), static_cast<long long>(k), static_cast<long long>(n), pe.pe_exec_ns,
                  composite, pe.stage_busy_ns[2], pe.dma_ns);
    ctx.note(line);
  }

  bool composite_;
};

class GemmSinglePe final : public GemmBench {
 public:
  GemmSinglePe() : GemmBench(false) {}
  static kbsim::BenchInfo info() {
    kbsim::BenchInfo i{"gemm-single-pe",
                       "One GEMM on PE 0 of cube 0: load A and B, one GEMM command, store C; reports engine busy times",
                       {kSinglePeM, kSinglePeK, kSinglePeN}};
    i.splits = true;  // it drives the system through the host runtime and statistics only
    i.reads_topology = true;
    return i;
  }
};

class MatmulComposite final : public GemmBench {
 public:
  MatmulComposite() : GemmBench(true) {}
  static kbsim::BenchInfo info() {
    kbsim::BenchInfo i{
        "matmul-composite",
        "A tiled composite GEMM on PE 0 of cube 0; reports the composite and kernel windows and stage busy times",
        {kCompositeM, kCompositeK, kCompositeN, kVariant, kEpilogue}};
    i.splits = true;  // it drives the system through the host runtime and statistics only
    i.reads_topology = true;
    return i;
  }
};

}  // namespace

KBSIM_PLUGIN("bench_gemm") {
  kbsim::bench_gemm::add_qkv_benches(plugin);
  kbsim::add_bench<GemmSinglePe>(plugin);
  kbsim::add_bench<MatmulComposite>(plugin);
  kbsim::add_kernel(plugin, "gemm_single_pe", &gemm_single_pe, "load A and B, dot, store C");
  kbsim::add_kernel(plugin, "matmul_composite", &matmul_composite,
                    "composite GEMM; argument 3 stages the operands (0 load_ref, 1 pinned, 2 ref_ref), "
                    "argument 4 (optional) adds a relu epilogue when non-zero");
}
