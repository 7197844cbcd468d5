// test.ccl_stuck: a CCL algorithm whose kernel goes wrong on purpose, and a
// bench that misuses the distributed runtime, for the deadlock and error tests.
//
// stuck_ring wires pe0 of cube 0 of every rank into a ring (global_E / global_W)
// and passes each rank's shard once around it. `fault`:
//   none             send global_E, receive global_W: works
//   wrong_direction  receive on global_E: with two ranks both directions lead to
//                    the same peer (the reference's ADR-0025 case), but the
//                    peer's messages land in the global_W ring, so nobody ever
//                    receives them
//   no_credit        rank 0 sends n_slots + 1 messages that nobody receives
//   unwired          receive from N, a direction this algorithm never installs
#include "kbsim/pe/ccl.hpp"
#include "kbsim/pe/kernels.hpp"
#include "kbsim/plugin.hpp"
#include "kbsim/rt/distributed.hpp"

namespace {

namespace tl = kbsim::tl;
namespace ccl = kbsim::ccl;

enum Fault : std::int64_t { kNone, kWrongDirection, kNoCredit, kUnwired };

void stuck_kernel(tl::Program& tl, const tl::Args& a) {
  if (tl.program_id(1) != 0 || tl.program_id(0) != 0) return;
  const auto rank = a.i64(1), n = a.i64(3), fault = a.i64(4), slots = a.i64(5);
  const tl::TensorArg::Shard* s = a.tensor(0).shard(0, 0);
  tl::Tensor acc = tl.load(s->ptr, {n});
  switch (fault) {
    case kWrongDirection:
      tl.send("global_E", acc);
      acc = acc + tl.recv("global_E", {n});
      break;
    case kNoCredit:
      if (rank == 0)
        for (std::int64_t k = 0; k <= slots; ++k) tl.send("global_E", acc);
      break;
    case kUnwired: acc = acc + tl.recv("N", {n}); break;
    default: tl.send("global_E", acc); acc = acc + tl.recv("global_W", {n});
  }
  tl.store(s->ptr, acc);
}

class StuckRing final : public ccl::Algorithm {
 public:
  static kbsim::ccl::AlgorithmInfo info() {
    return {"stuck_ring",
            "test algorithm: one pass around a ring of cube 0's pe0, with a fault on purpose",
            {kbsim::param_string("fault", "none", "none, wrong_direction, no_credit or unwired")},
            {"ring_1d"},
            {}};
  }
  std::vector<ccl::Wire> wiring(const ccl::Setup& s) const override {
    std::vector<ccl::Wire> w;
    for (unsigned r = 0; r < s.world_size; ++r)
      for (const auto& [dir, peer] : ccl::sip_neighbors(s.system, s.world_size, r))
        w.push_back({{r, 0, 0}, dir, {peer, 0, 0}});
    return w;
  }
  ccl::Launch launch(const ccl::Collective& c) const override {
    const std::string& f = c.setup.params.get_string("fault");
    const std::int64_t fault = f == "wrong_direction" ? kWrongDirection
                               : f == "no_credit"     ? kNoCredit
                               : f == "unwired"       ? kUnwired
                                                      : kNone;
    return {"stuck-ring", 1, 1, {fault, c.setup.params.get_int("n_slots")}};
  }
};

/// Misuses of the distributed runtime, by `case`.
class DistMisuse final : public kbsim::Bench {
 public:
  static kbsim::BenchInfo info() {
    return {"dist-misuse",
            "test bench: uses the distributed runtime wrongly on purpose",
            {kbsim::param_string("case", "uninitialized", "uninitialized, backend, op, outside_spawn or rank_throws")},
            false,
            true};
  }
  void run(kbsim::BenchContext& ctx) override {
    const std::string& c = ctx.params().get_string("case");
    auto& rt = ctx.configured().service<kbsim::rt::Runtime>();
    auto& dist = ctx.configured().service<kbsim::rt::Distributed>();
    auto t = rt.zeros({16, 8}, kbsim::DType::kF16, {kbsim::rt::Split::kRowWise, kbsim::rt::Split::kReplicate, 1, 0});
    if (c == "uninitialized") dist.all_reduce(t);
    if (c == "backend") dist.init_process_group(ccl::config(ctx), "nccl");
    dist.init_process_group(ccl::config(ctx));
    if (c == "op") dist.all_reduce(t, "max");
    if (c == "outside_spawn") dist.all_reduce(t);
    if (c == "rank_throws")
      dist.spawn(
          [&](unsigned rank) {
            if (rank == 1) throw std::runtime_error("worker bug");
            dist.barrier();
          },
          dist.get_world_size());
  }
};

}  // namespace

KBSIM_PLUGIN("test_ccl_stuck") {
  kbsim::ccl::add_algorithm<StuckRing>(plugin);
  kbsim::add_bench<DistMisuse>(plugin);
  kbsim::add_kernel(plugin, "stuck-ring", &stuck_kernel, "stuck_ring's kernel");
}
