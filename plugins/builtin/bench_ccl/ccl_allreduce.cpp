// ccl-allreduce (docs/model.md, "Collectives"): one all_reduce of a tensor
// with one shard of n_elem f16 per cube's pe0 on every rank (rank = SIP), the
// reference's layout, through the distributed runtime and the CCL algorithm
// ccl.yaml selects. The SIP count and topology come from the topology
// (--set system.sips.*), the algorithm and slot memory from ccl.yaml
// (--set ccl.algorithm=..., ccl.buffer_kind=...).
//
// Metrics: the critical path max(pe_exec_ns) over every rank's PEs, each
// rank's, the window of each phase the kernel marked, the IPCQ payload moved,
// the busiest link, and the reference's hand-derived model beside the measured
// value. The collective sums every shard (each cube's of each rank), and every
// shard ends up holding that sum. Values are k/8 (k in 0..7, by rank, cube and
// element), so every partial sum is exact in f16 and any algorithm must give
// identical results; --verify-data checks them on every rank. With
// one_cube, every rank's tensor is one shard on cube 0's pe0 (the reference's
// tensor-parallel layout), and the algorithm takes its single-cube path.
#include <algorithm>
#include <cstdio>
#include <map>

#include "ccl_report.hpp"
#include "kbsim/ahbm/names.hpp"
#include "kbsim/plugin.hpp"
#include "kbsim/rt/distributed.hpp"
#include "kbsim/tl/verify.hpp"

namespace kbsim::bench_ccl {

namespace {

double value(unsigned rank, unsigned cube, std::int64_t i) {
  return static_cast<double>((rank * 7 + cube * 3 + static_cast<unsigned>(i % 8)) % 8) / 8.0;
}

constexpr IntParam kNElem{"n_elem", 49152, "f16 elements per cube's shard (49152 = 96 KB)"};
constexpr BoolParam kFitSlot{"fit_slot", true,
                             "raise ccl.yaml's slot_size to what the algorithm needs when it is smaller (one shard for "
                             "an algorithm that sends a shard per message, as the reference's sweep does)"};
constexpr BoolParam kOneCube{"one_cube", false,
                             "every rank's tensor on cube 0's pe0 only (one shard per rank, the reference's "
                             "tensor-parallel layout): the single-cube path, straight to the exchange between SIPs"};

class CclAllreduce final : public Bench {
 public:
  static BenchInfo info() {
    BenchInfo i{"ccl-allreduce",
                "all_reduce of one f16 shard per cube's pe0 on every SIP, through the CCL algorithm ccl.yaml selects; "
                "reports the critical path, per-phase windows, bytes moved and the busiest link",
                {kNElem, kFitSlot, kOneCube}};
    i.splits = true;  // it drives the system through the host runtime only
    i.reads_topology = true;
    return i;
  }

  void run(BenchContext& ctx) override {
    const Params& p = ctx.params();
    const std::int64_t n = p.get(kNElem);
    p.check(n >= 1 && n <= (std::int64_t{1} << 24), kNElem, "must be in 1..16777216");
    ccl::Config cfg = ccl::config(ctx);
    const std::uint64_t shard_bytes = static_cast<std::uint64_t>(n) * 2;
    System& sys = ctx.configured();
    if (p.get(kFitSlot))
      if (const std::uint64_t need = cfg.fit_slot(ccl::SystemShape::from(sys.attrs()), static_cast<std::uint64_t>(n),
                                                  "ccl-allreduce fit_slot"))
        ctx.note("slot_size raised to " + std::to_string(need) + " bytes: " + cfg.algorithm +
                 " sends one shard per message (fit_slot)");

    auto& rt = sys.service<rt::Runtime>();
    auto& dist = sys.service<rt::Distributed>();
    dist.init_process_group(cfg);
    const bool one_cube = p.get(kOneCube);
    const unsigned world = dist.get_world_size(), cubes = one_cube ? 1 : rt.cubes_per_sip();
    std::vector<std::size_t> mismatches(world, 0);
    std::string first_bad;
    dist.spawn(
        [&](unsigned rank) {
          rt.set_device(rank);
          std::vector<double> v(static_cast<std::size_t>(cubes) * static_cast<std::size_t>(n));
          for (unsigned c = 0; c < cubes; ++c)
            for (std::int64_t i = 0; i < n; ++i) v[c * static_cast<std::size_t>(n) + i] = value(rank, c, i);
          // A shard per cube's pe0 (num_cubes 0: every cube), or one on cube 0's.
          const rt::DPPolicy layout{rt::Split::kRowWise, rt::Split::kReplicate, 1, one_cube ? 1u : 0u};
          rt::Tensor t = rt.from_host({cubes, n}, DType::kF16, v, layout, "t" + std::to_string(rank));
          dist.barrier();  // every rank's data is in place: the collectives start together
          dist.all_reduce(t);
          if (!verify::asked(ctx)) return;
          const std::vector<double> got = rt.read_values(t);
          for (unsigned c = 0; c < cubes; ++c)
            for (std::int64_t i = 0; i < n; ++i) {
              double want = 0;  // every shard of every rank, summed
              for (unsigned r = 0; r < world; ++r)
                for (unsigned k = 0; k < cubes; ++k) want += value(r, k, i);
              if (got[c * static_cast<std::size_t>(n) + i] != want && mismatches[rank]++ == 0 && first_bad.empty())
                first_bad = "rank " + std::to_string(rank) + " cube " + std::to_string(c) + " element " +
                            std::to_string(i) + ": " + std::to_string(got[c * static_cast<std::size_t>(n) + i]) +
                            " instead of " + std::to_string(want);
            }
        },
        world);

    const rt::CollectiveResult& r = dist.collectives().at(0);
    report(ctx, sys, r, cfg, shard_bytes);
    if (verify::asked(ctx)) {
      std::size_t bad = 0;
      for (std::size_t m : mismatches) bad += m;
      if (bad)
        throw BenchError("DATA_MISMATCH", std::to_string(bad) + " reduced values are wrong; first: " + first_bad);
      ctx.note("verified: every rank holds the sum of all " + std::to_string(world) + " ranks' shards (" +
               std::to_string(world * cubes * static_cast<std::uint64_t>(n)) + " f16 values)");
    }
  }
};

}  // namespace

void add_ccl_allreduce(PluginDescriptor& plugin) { add_bench<CclAllreduce>(plugin); }

}  // namespace kbsim::bench_ccl
