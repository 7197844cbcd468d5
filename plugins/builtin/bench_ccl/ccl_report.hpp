// What the collective benches report (docs/model.md, "Collectives").
#pragma once

#include "kbsim/bench.hpp"
#include "kbsim/plugin.hpp"
#include "kbsim/rt/distributed.hpp"

namespace kbsim::bench_ccl {

/// Metrics and notes of one all_reduce of `shard_bytes` per cube: the critical
/// path, per-rank times, phase windows, IPCQ bytes, the busiest link and the
/// reference's hand-derived model.
void report(BenchContext& ctx, System& sys, const rt::CollectiveResult& r, const ccl::Config& cfg,
            std::uint64_t shard_bytes);

/// The reference's hand-derived allreduce model: 1346 ns + 1.20 ns per
/// 128-byte packet, packets = bytes per PE x 8 PEs / 128.
inline double reference_model_ns(std::uint64_t bytes_per_pe) {
  return 1346.0 + 1.20 * static_cast<double>(bytes_per_pe) * 8.0 / 128.0;
}

void add_ccl_allreduce(PluginDescriptor& plugin);
void add_pe2pe_latency(PluginDescriptor& plugin);

}  // namespace kbsim::bench_ccl
