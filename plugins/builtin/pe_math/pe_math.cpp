// builtin.pe_math: the PE's SIMD unit (docs/model.md, "The PE"): elementwise
// and reduction ops. A MATH stage of m x n output elements holds the PE's
// compute slot (shared with PE_GEMM) for
//   max(overhead_ns, ceil(m * n / lanes) / clock_ghz)  ns.
#include <algorithm>

#include "kbsim/pe/compute_engine.hpp"
#include "kbsim/plugin.hpp"

namespace {

using kbsim::pe::StageType;

constexpr kbsim::IntParam kLanes{"lanes", 64, "output elements per clock cycle"};
constexpr kbsim::FloatParam kClockGhz{"clock_ghz", 1.0, "clock frequency"};
constexpr kbsim::FloatParam kOverheadNs{"overhead_ns", 2.0, "minimum time of a stage"};

class PeMath final : public kbsim::pe::ComputeEngine {
 public:
  explicit PeMath(const kbsim::ComponentContext& ctx)
      : ComputeEngine(ctx, StageType::kMath),
        lanes_(static_cast<std::uint64_t>(params().get(kLanes))),
        clock_ghz_(params().get(kClockGhz)),
        overhead_(kbsim::ns_to_ticks(params().get(kOverheadNs))) {
    params().check(params().get(kLanes) > 0, kLanes, "must be > 0");
    params().check(clock_ghz_ > 0, kClockGhz, "must be > 0");
    params().check(params().get(kOverheadNs) >= 0, kOverheadNs, "must be >= 0");
  }

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i = base_info(
        "pe_math", "PE SIMD unit: a MATH stage takes max(overhead, ceil(m*n / lanes) cycles)", StageType::kMath);
    i.params.insert(i.params.begin(), {kLanes, kClockGhz, kOverheadNs});
    return i;
  }

 private:
  kbsim::Tick latency(const kbsim::pe::Stage& s) const override {
    std::uint64_t elements = std::uint64_t{s.m} * s.n;
    return std::max(overhead_, cycles_to_ticks(static_cast<double>((elements + lanes_ - 1) / lanes_), clock_ghz_));
  }

  std::uint64_t lanes_;
  double clock_ghz_;
  kbsim::Tick overhead_;
};

}  // namespace

KBSIM_PLUGIN("pe_math") { kbsim::add_component<PeMath>(plugin); }
