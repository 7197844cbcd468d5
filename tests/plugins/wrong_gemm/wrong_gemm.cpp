// test.wrong_gemm: a PE GEMM engine with pe_gemm's timing (16 ns per 32x64x32
// tile) whose data-pass values are wrong: every product's first element is
// off by one. `kbsim run --verify-data` must catch it.
#include "kbsim/pe/compute_engine.hpp"
#include "kbsim/plugin.hpp"

namespace {

class WrongGemm final : public kbsim::pe::ComputeEngine, public kbsim::DataCompute {
 public:
  explicit WrongGemm(const kbsim::ComponentContext& ctx) : ComputeEngine(ctx, kbsim::pe::StageType::kGemm) {}

  static kbsim::ComponentInfo info() {
    return base_info("wrong_gemm", "test GEMM engine that computes wrong values (first element + 1)",
                     kbsim::pe::StageType::kGemm);
  }

  void gemm(std::span<const float> a, std::span<const float> b, std::span<float> out, std::size_t m, std::size_t k,
            std::size_t n) const override {
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        float acc = 0;
        for (std::size_t x = 0; x < k; ++x) acc += a[i * k + x] * b[x * n + j];
        out[i * n + j] = acc;
      }
    if (!out.empty()) out[0] += 1.0f;
  }

 private:
  kbsim::Tick latency(const kbsim::pe::Stage& s) const override {
    return cycles_to_ticks(static_cast<double>((std::uint64_t{s.m} * s.k * s.n + 4095) / 4096), 1.0);
  }
};

}  // namespace

KBSIM_PLUGIN("test_wrong_gemm") { kbsim::add_component<WrongGemm>(plugin); }
