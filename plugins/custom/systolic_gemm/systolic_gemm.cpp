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

class SystolicGemm final : public kbsim::pe::ComputeEngine {
 public:
  explicit SystolicGemm(const kbsim::ComponentContext& ctx)
      : ComputeEngine(ctx, StageType::kGemm),
        rows_(static_cast<std::uint64_t>(params().get_int("rows"))),
        cols_(static_cast<std::uint64_t>(params().get_int("cols"))),
        clock_ghz_(params().get_float("clock_ghz")),
        overhead_(kbsim::ns_to_ticks(params().get_float("overhead_ns"))) {
    params().check(params().get_int("rows") > 0, "rows", "must be > 0");
    params().check(params().get_int("cols") > 0, "cols", "must be > 0");
    params().check(clock_ghz_ > 0, "clock_ghz", "must be > 0");
    params().check(params().get_float("overhead_ns") >= 0, "overhead_ns", "must be >= 0");
  }

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i =
        base_info("systolic_gemm",
                  "weight-stationary systolic array: ceil(k/rows) * ceil(n/cols) folds of m + rows + cols - 1 cycles",
                  StageType::kGemm);
    i.params.insert(i.params.begin(), {kbsim::param_int("rows", 32, "array rows (the k extent of a fold)"),
                                       kbsim::param_int("cols", 32, "array columns (the n extent of a fold)"),
                                       kbsim::param_float("clock_ghz", 1.0, "clock frequency"),
                                       kbsim::param_float("overhead_ns", 0.0, "fixed time added to every stage")});
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
