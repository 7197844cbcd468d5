// custom.systolic_gemm: a weight-stationary systolic array as the PE's GEMM
// engine, a drop-in for builtin.pe_gemm (same slot, same stages).
//
// Timing model. The array has `rows` x `cols` processing elements. A GEMM
// stage (m x k) * (k x n) is cut into folds: each fold pins a rows x cols
// block of the k x n weights in the array, so
//   folds = ceil(k / rows) * ceil(n / cols).
// A fold streams the m rows of its A block through the array; the first
// result leaves after the pipeline fill (rows + cols - 1 cycles) and one
// row follows per cycle, so a fold takes m + rows + cols - 1 cycles and
//   cycles  = folds * (m + rows + cols - 1)
//   latency = overhead_ns + cycles / clock_ghz  ns.
// Folds do not overlap (weights are reloaded between them); the weight load
// is assumed hidden behind the previous fold's drain.
#include "kbsim/pe/compute_engine.hpp"
#include "kbsim/plugin.hpp"

namespace {

using kbsim::pe::StageType;

constexpr kbsim::IntParam kRows{"rows", 32, "array rows (the k extent of a fold)"};
constexpr kbsim::IntParam kCols{"cols", 32, "array columns (the n extent of a fold)"};
constexpr kbsim::FloatParam kClockGhz{"clock_ghz", 1.0, "clock frequency"};
constexpr kbsim::FloatParam kOverheadNs{"overhead_ns", 0.0, "fixed time added to every stage"};

class SystolicGemm final : public kbsim::pe::ComputeEngine {
 public:
  explicit SystolicGemm(const kbsim::ComponentContext& ctx)
      : ComputeEngine(ctx, StageType::kGemm),
        rows_(static_cast<std::uint64_t>(params().get(kRows))),
        cols_(static_cast<std::uint64_t>(params().get(kCols))),
        clock_ghz_(params().get(kClockGhz)),
        overhead_(kbsim::ns_to_ticks(params().get(kOverheadNs))) {
    params().check(params().get(kRows) > 0, kRows, "must be > 0");
    params().check(params().get(kCols) > 0, kCols, "must be > 0");
    params().check(clock_ghz_ > 0, kClockGhz, "must be > 0");
    params().check(params().get(kOverheadNs) >= 0, kOverheadNs, "must be >= 0");
  }

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i =
        base_info("systolic_gemm",
                  "weight-stationary systolic array: ceil(k/rows) * ceil(n/cols) folds of m + rows + cols - 1 cycles",
                  StageType::kGemm);
    i.params.insert(i.params.begin(), {kRows, kCols, kClockGhz, kOverheadNs});
    return i;
  }

 private:
  kbsim::Tick latency(const kbsim::pe::Stage& s) const override {
    auto ceil_div = [](std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; };
    std::uint64_t folds = ceil_div(s.k, rows_) * ceil_div(s.n, cols_);
    std::uint64_t cycles = folds * (s.m + rows_ + cols_ - 1);
    return overhead_ + cycles_to_ticks(static_cast<double>(cycles), clock_ghz_);
  }

  std::uint64_t rows_, cols_;
  double clock_ghz_;
  kbsim::Tick overhead_;
};

}  // namespace

KBSIM_PLUGIN("systolic_gemm") { kbsim::add_component<SystolicGemm>(plugin); }
