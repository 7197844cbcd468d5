// va-offset-verify, the reference's bench of the same name: a kernel written
// the legacy way, for local dims, finds its own piece of a sharded tensor by
// virtual-address arithmetic alone and checks every value it loads.
//
// X (M x N, f32, the value of element (i, j) is i*N + j) is split row-wise over
// `cubes` cubes, then column-wise over `pes` PEs of each. The kernel takes
// (X, M, N); the launch's dim remap (rt::LaunchOptions::auto_dim_remap, on by
// default as in the reference) hands it the local (m, n) of its piece. PE p of
// cube c computes its piece's address as X's base + k * align64(m*n*4) with
// k = c*pes + p (the runtime lays pieces out in shard order at 64-byte
// boundaries), compares it with the launch's shard table, loads its (m, n)
// through the MMU and checks element (r, s) is (c*m + r)*N + p*n + s, with
// N = n * pes. Any difference fails the kernel, naming the PE and the element.
// `remap=false` passes M and N as given: the kernel then reads past its piece,
// the foot-gun the remap exists for. Shapes must divide evenly.
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "benches.hpp"
#include "kbsim/ahbm/phys_addr.hpp"
#include "kbsim/pe/kernels.hpp"
#include "kbsim/plugin.hpp"
#include "kbsim/rt/runtime.hpp"

namespace {

namespace tl = kbsim::tl;
namespace rt = kbsim::rt;
using kbsim::DType;

constexpr kbsim::IntParam kM{"M", 64, "rows of X"};
constexpr kbsim::IntParam kN{"N", 128, "columns of X"};
constexpr kbsim::IntParam kCubes{"cubes", 2, "cubes X's rows are split over"};
constexpr kbsim::IntParam kPes{"pes", 4, "PEs of each cube its columns are split over"};
constexpr kbsim::BoolParam kRemap{"remap", true, "rewrite the global M and N into the piece's at launch"};

constexpr std::uint64_t kPieceAlign = 64;

[[noreturn]] void mismatch(const std::string& what) { throw tl::Error("va-offset-verify: " + what); }

/// Args (X, m, n): check this PE's piece of X by address arithmetic and by value.
void va_offset_verify(tl::Program& tl, const tl::Args& args) {
  const tl::TensorArg& x = args.tensor(0);
  const std::int64_t m = args.i64(1), n = args.i64(2);
  const auto pe = static_cast<unsigned>(tl.program_id(0)), cube = static_cast<unsigned>(tl.program_id(1));
  const auto pes = static_cast<std::uint64_t>(tl.num_programs(0));
  const std::uint64_t piece = (m * n * 4 + kPieceAlign - 1) / kPieceAlign * kPieceAlign;
  const std::uint64_t va = x.ptr + (cube * pes + pe) * piece;
  const tl::TensorArg::Shard* mine = x.shard(cube, pe);
  if (!mine || mine->ptr != va)
    mismatch("PE " + std::to_string(pe) + " of cube " + std::to_string(cube) + " computed its piece at VA " +
             kbsim::ahbm::hex(va) + " but it is at " + (mine ? kbsim::ahbm::hex(mine->ptr) : std::string("(none)")));
  const tl::Tensor got = tl.load(va, {m, n}, DType::kF32);
  const std::int64_t n_global = n * static_cast<std::int64_t>(pes);
  for (std::int64_t r = 0; r < m; ++r)
    for (std::int64_t s = 0; s < n; ++s) {
      const double want = static_cast<double>((cube * m + r) * n_global + pe * n + s);
      if (got.at(r, s) != want)
        mismatch("PE " + std::to_string(pe) + " of cube " + std::to_string(cube) + " read " +
                 std::to_string(got.at(r, s)) + " at (" + std::to_string(r) + ", " + std::to_string(s) +
                 ") of its piece, expected " + std::to_string(want));
    }
}

class VaOffsetVerify final : public kbsim::Bench {
 public:
  static kbsim::BenchInfo info() {
    kbsim::BenchInfo i{"va-offset-verify",
                       "The reference's VA-offset check: each PE finds its piece of a sharded tensor by address "
                       "arithmetic on the local dims the launch remaps, and checks every value",
                       {kM, kN, kCubes, kPes, kRemap}};
    i.splits = true;  // it drives the system through the host runtime only
    i.reads_topology = true;
    return i;
  }

  void run(kbsim::BenchContext& ctx) override {
    const kbsim::Params& p = ctx.params();
    rt::Runtime& r = ctx.configured().service<rt::Runtime>();
    const std::int64_t m = p.get(kM), n = p.get(kN), cubes = p.get(kCubes), pes = p.get(kPes);
    p.check(cubes > 0 && cubes <= static_cast<std::int64_t>(r.cubes_per_sip()), kCubes, "must be in 1..cubes per SIP");
    p.check(pes > 0 && pes <= static_cast<std::int64_t>(r.pes_per_cube()), kPes, "must be in 1..PEs per cube");
    p.check(m > 0 && m <= 4096 && m % cubes == 0, kM, "must be in 1..4096 and a multiple of cubes");
    p.check(n > 0 && n <= 4096 && n % pes == 0, kN, "must be in 1..4096 and a multiple of pes");
    // The launch rewrites integers by value: M and N must not be one value with two local sizes.
    p.check(m != n || m / cubes == n / pes, kN, "must differ from M unless M / cubes = N / pes");
    r.on_devices(ctx, [&](kbsim::BenchContext& dev) {
      const rt::DPPolicy dp{rt::Split::kRowWise, rt::Split::kColumnWise, static_cast<unsigned>(pes),
                            static_cast<unsigned>(cubes)};
      std::vector<double> values(static_cast<std::size_t>(m * n));
      std::iota(values.begin(), values.end(), 0.0);
      rt::Tensor x = r.from_host({m, n}, DType::kF32, values, dp, "X");
      rt::LaunchOptions opt;
      opt.auto_dim_remap = p.get(kRemap);
      const rt::LaunchResult& res = r.wait(r.launch("va_offset_verify", {x, m, n}, opt));
      kbsim::Metrics& out = dev.metrics();
      out.set("pes_checked", static_cast<std::int64_t>(res.pes.size()));
      out.set("elements_checked", m * n);
      out.set("kernel_window_ns", res.pe_exec_ns);
      char line[160];
      std::snprintf(line, sizeof line, "%zu PEs each found their (%lld, %lld) piece of X (%lld, %lld) and read it back",
                    res.pes.size(), static_cast<long long>(m / cubes), static_cast<long long>(n / pes),
                    static_cast<long long>(m), static_cast<long long>(n));
      dev.note(line);
    });
  }
};

}  // namespace

void register_va_offset(kbsim::PluginDescriptor& plugin) {
  kbsim::add_bench<VaOffsetVerify>(plugin);
  kbsim::add_kernel(plugin, "va_offset_verify", &va_offset_verify,
                    "find this PE's piece of a sharded tensor by VA arithmetic on local dims and check its values");
}
