// test_forgot_device: a bench whose spawned workers make their tensors without set_device(rank), and whose driver
// asks get_rank() outside any worker: the reference's two debug warnings (--log-level debug).
#include "kbsim/bench.hpp"
#include "kbsim/plugin.hpp"
#include "kbsim/rt/distributed.hpp"
#include "kbsim/rt/runtime.hpp"

namespace {

class ForgotDevice final : public kbsim::Bench {
 public:
  static kbsim::BenchInfo info() {
    kbsim::BenchInfo i{"forgot-device", "test bench: workers that forget set_device, get_rank outside them", {}};
    i.reads_topology = true;
    return i;
  }
  void run(kbsim::BenchContext& ctx) override {
    auto& rt = ctx.configured().service<kbsim::rt::Runtime>();
    auto& dist = ctx.configured().service<kbsim::rt::Distributed>();
    dist.init_process_group(kbsim::ccl::config(ctx));
    ctx.metrics().set("driver_rank", std::uint64_t{dist.get_rank()});
    dist.spawn([&](unsigned) { rt.empty({64}, kbsim::DType::kF16, {}, "forgotten"); }, dist.get_world_size());
  }
};

}  // namespace

KBSIM_PLUGIN("test_forgot_device") { kbsim::add_bench<ForgotDevice>(plugin); }
