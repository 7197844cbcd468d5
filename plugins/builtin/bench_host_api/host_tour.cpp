// host-api-tour: a host program written the reference's way, ported: a tiled
// placement, a tensor-to-tensor copy, slices (a scalar fill, a refused
// cross-shard one), a scope freeing its temporaries, and a kernel written for
// local dims launched with the global ones (the launch's dim remap). Each step
// is checked; --verify-data also checks the kernel's computed values.
// A small tensor is also placed in the PEs' allocatable TCM and read back.
//
//   X (M x K, f16, tiled_row_major over `pes` PEs of cube 0) from the host
//   Y = copy of X (column_wise over the same PEs)
//   Y[M-2:M, 0:1] = 7 (inside Y's first shard), read back
//   Y[0:M, 0:K] would span shards: NOT_SUPPORTED
//   in a scope: Z = empty like X; launch scale(X, Z, M, K, alpha): each PE
//   loads its (m, k) block of X, multiplies by alpha, stores Z's block
//   Z read back: alpha * X (with --verify-data); the scope frees Z
#include <cstdio>
#include <string>
#include <vector>

#include "benches.hpp"
#include "kbsim/pe/kernels.hpp"
#include "kbsim/plugin.hpp"
#include "kbsim/rt/runtime.hpp"
#include "kbsim/tl/verify.hpp"

namespace {

namespace tl = kbsim::tl;
namespace rt = kbsim::rt;
using kbsim::DType;

constexpr kbsim::IntParam kM{"M", 64, "rows of X"};
constexpr kbsim::IntParam kK{"K", 96, "columns of X"};
constexpr kbsim::IntParam kPes{"pes", 4, "PEs of cube 0 X is tiled over (a grid of blocks)"};
constexpr kbsim::FloatParam kAlpha{"alpha", 0.5, "the scale the kernel applies"};

/// Args (X, Z, m, k, alpha): Z's block = alpha * X's block, each PE its own (local dims m x k).
void scale(tl::Program& tl, const tl::Args& args) {
  const auto pe = static_cast<unsigned>(tl.program_id(0)), cube = static_cast<unsigned>(tl.program_id(1));
  const tl::TensorArg &x = args.tensor(0), &z = args.tensor(1);
  const tl::TensorArg::Shard *xs = x.shard(cube, pe), *zs = z.shard(cube, pe);
  if (!xs || !zs) return;
  const std::int64_t m = args.i64(2), k = args.i64(3);
  if (xs->shape != kbsim::Shape{m, k})
    throw tl::Error("scale: PE " + std::to_string(pe) + " was given (" + std::to_string(m) + ", " + std::to_string(k) +
                    ") but holds " + xs->shape.str());
  tl.store(zs->ptr, tl.full({1}, args.f64(4)) * tl.load(xs->ptr, {m, k}, x.dtype));
}

std::vector<double> values_of(std::int64_t n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 29) * 0.25 - 3.0;  // exact in f16
  return v;
}

[[noreturn]] void failed(const std::string& what) { throw kbsim::BenchError("CHECK_FAILED", "host-api-tour: " + what); }

class HostApiTour final : public kbsim::Bench {
 public:
  static kbsim::BenchInfo info() {
    kbsim::BenchInfo i{"host-api-tour",
                       "A host program the reference's way: tiled placement, copy, slices, a scope and a kernel "
                       "taking global dims, each step checked",
                       {kM, kK, kPes, kAlpha}};
    i.splits = true;  // it drives the system through the host runtime only
    i.reads_topology = true;
    return i;
  }

  void run(kbsim::BenchContext& ctx) override {
    const kbsim::Params& p = ctx.params();
    rt::Runtime& r = ctx.configured().service<rt::Runtime>();
    const std::int64_t m = p.get(kM), k = p.get(kK), pes = p.get(kPes);
    const double alpha = p.get(kAlpha);
    p.check(pes > 1 && pes <= static_cast<std::int64_t>(r.pes_per_cube()), kPes,
            "must be in 2..PEs per cube (a slice across shards needs two)");
    // The tile grid X is cut into (rt::Split): rows x cols blocks, rows the largest divisor not above the root.
    std::int64_t grid_rows = 1;
    for (std::int64_t d = 1; d * d <= pes; ++d)
      if (pes % d == 0) grid_rows = d;
    const std::int64_t grid_cols = pes / grid_rows;
    p.check(m > 1 && m <= 4096 && m % grid_rows == 0, kM,
            "must be in 2..4096 and divide by the tile grid's " + std::to_string(grid_rows) + " rows");
    p.check(k > 1 && k <= 4096 && k % grid_cols == 0, kK,
            "must be in 2..4096 and divide by the tile grid's " + std::to_string(grid_cols) + " columns");
    // The launch rewrites integers by value: M and K must not be one value with two local sizes.
    p.check(m != k || grid_rows == grid_cols, kK, "must differ from M on a grid that is not square");
    r.on_devices(ctx, [&](kbsim::BenchContext& dev) {
      const auto n = static_cast<unsigned>(pes);
      const std::vector<double> xv = values_of(m * k);
      rt::Tensor x =
          r.from_host({m, k}, DType::kF16, xv, {rt::Split::kReplicate, rt::Split::kTiledRowMajor, n, 1}, "X");
      rt::Tensor y = r.empty({m, k}, DType::kF16, {rt::Split::kReplicate, rt::Split::kColumnWise, n, 1}, "Y");
      const rt::TransferResult copied = r.copy(y, x);
      if (r.read_values(y) != xv) failed("copy: Y does not hold X's values");
      dev.note("copy X -> Y: " + std::to_string(copied.bytes) + " bytes in " +
               kbsim::format_ns(kbsim::ticks_to_ns(copied.t_done - copied.t_submit)) + " ns");

      const rt::Region corner{.row = m - 2, .col = 0, .rows = 2, .cols = 1};
      r.write_slice(y, corner, std::vector<double>{7});
      if (r.read_slice(y, corner) != std::vector<double>{7, 7}) failed("slice: the filled corner reads back wrong");
      try {
        r.read_slice(y, {.row = 0, .col = 0, .rows = m, .cols = k});
        failed("slice: a region across shards was not refused");
      } catch (const kbsim::BenchError& e) {
        if (e.reason() != "NOT_SUPPORTED") throw;
      }
      dev.note("slices: filled Y[" + std::to_string(m - 2) + ":" + std::to_string(m) +
               ", 0:1] = 7; a whole-tensor slice across shards is NOT_SUPPORTED");

      const std::vector<double> bias = values_of(k);  // a small tensor in each PE's allocatable TCM
      rt::Tensor b = r.from_host({1, k}, DType::kF32, bias,
                                 {.pe = rt::Split::kReplicate, .num_pes = n, .space = rt::Space::kTcm}, "bias");
      if (r.read_values(b) != bias) failed("TCM: the bias does not read back");
      dev.note("TCM: bias (1, " + std::to_string(k) + ") f32 in the TCM of " + std::to_string(n) + " PEs, read back");
      r.free(b);

      std::vector<rt::Tensor> temporaries;
      {
        rt::TensorScope scope(r);
        rt::Tensor z = r.empty({m, k}, DType::kF16, x.policy(), "Z");
        const rt::LaunchResult& res = r.wait(r.launch("host-tour-scale", {x, z, m, k, alpha}));
        dev.metrics().set("kernel_window_ns", res.pe_exec_ns);
        dev.metrics().set("pes", static_cast<std::int64_t>(res.pes.size()));
        if (kbsim::verify::asked(dev)) {
          std::vector<double> want = xv;
          for (double& v : want) v *= alpha;
          if (r.read_values(z) != want) failed("kernel: Z is not alpha * X");
          char line[96];
          std::snprintf(line, sizeof line, "kernel: verified Z = %g * X on %zu PEs", alpha, res.pes.size());
          dev.note(line);
        }
        dev.note(r.summary(z));
        temporaries = scope.tensors();
      }
      if (temporaries.size() != 1 || !temporaries.front().info().freed) failed("scope: Z was not freed");
      dev.note("scope: freed Z");
      r.free(y);
      r.free(x);
    });
  }
};

}  // namespace

void register_host_tour(kbsim::PluginDescriptor& plugin) {
  kbsim::add_bench<HostApiTour>(plugin);
  kbsim::add_kernel(plugin, "host-tour-scale", &scale, "Z's block = alpha * X's block, for local dims (m, k)");
}
