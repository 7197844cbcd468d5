// builtin.pe_gemm: the PE's MAC array (docs/model.md, "The PE"). A GEMM stage
// of m x k x n holds the PE's compute slot (shared with PE_MATH) for
//   overhead_ns + ceil(m * k * n / macs_per_cycle) / clock_ghz  ns.
#include "kbsim/pe/compute_engine.hpp"
#include "kbsim/plugin.hpp"

namespace {

using kbsim::pe::StageType;

constexpr kbsim::IntParam kMacsPerCycle{"macs_per_cycle", 4096, "multiply-accumulates per clock cycle"};
constexpr kbsim::FloatParam kClockGhz{"clock_ghz", 1.0, "clock frequency"};
constexpr kbsim::FloatParam kOverheadNs{"overhead_ns", 0.0, "fixed time added to every stage"};

class PeGemm final : public kbsim::pe::ComputeEngine {
 public:
  explicit PeGemm(const kbsim::ComponentContext& ctx)
      : ComputeEngine(ctx, StageType::kGemm),
        macs_per_cycle_(static_cast<std::uint64_t>(params().get(kMacsPerCycle))),
        clock_ghz_(params().get(kClockGhz)),
        overhead_(kbsim::ns_to_ticks(params().get(kOverheadNs))) {
    params().check(params().get(kMacsPerCycle) > 0, kMacsPerCycle, "must be > 0");
    params().check(clock_ghz_ > 0, kClockGhz, "must be > 0");
    params().check(params().get(kOverheadNs) >= 0, kOverheadNs, "must be >= 0");
  }

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i =
        base_info("pe_gemm", "PE MAC array: a GEMM stage takes ceil(m*k*n / macs_per_cycle) cycles", StageType::kGemm);
    i.params.insert(i.params.begin(), {kMacsPerCycle, kClockGhz, kOverheadNs});
    return i;
  }

 private:
  kbsim::Tick latency(const kbsim::pe::Stage& s) const override {
    std::uint64_t macs = std::uint64_t{s.m} * s.k * s.n;
    return overhead_ + cycles_to_ticks(static_cast<double>((macs + macs_per_cycle_ - 1) / macs_per_cycle_), clock_ghz_);
  }

  std::uint64_t macs_per_cycle_;
  double clock_ghz_;
  kbsim::Tick overhead_;
};

}  // namespace

KBSIM_PLUGIN("pe_gemm") { kbsim::add_component<PeGemm>(plugin); }
