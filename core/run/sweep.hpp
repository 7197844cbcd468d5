// Sweeps: independent bench runs spread over worker processes (fork, one
// point per child, at most `jobs` at a time) and over the ranks of an
// `mpirun`. A point's outcome travels as bytes (encode/decode), so a result
// computed in a child or on another rank is the very value a serial run gives.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kbsim/bench.hpp"
#include "kbsim/time.hpp"

namespace kbsim::core {

/// One point as the run records it.
struct PointRecord {
  PointResult result;
  Metrics config;  ///< {bench, params (resolved), set}
  Tick sim_time = 0;
  std::uint64_t events = 0;
  double build_wall_s = 0.0;  ///< host time: not part of what must agree
};

std::string encode(const PointRecord& r);
PointRecord decode(std::string_view bytes);

/// Run points 0..n-1 with `run_one`, in this process (jobs <= 1) or in `jobs`
/// forked workers, each running point after point (the next one free, in index
/// order); results in index order. A worker that dies (a crash in a plugin)
/// fails its point with `describe(i)` and the signal; another takes its place.
/// `progress` (when set) is told after each point: (done, n).
std::vector<PointRecord> run_parallel(std::size_t n, unsigned jobs,
                                      const std::function<PointRecord(std::size_t)>& run_one,
                                      const std::function<std::string(std::size_t)>& describe,
                                      const std::function<void(std::size_t, std::size_t)>& progress);

/// The points of `n` that rank `rank` of `size` runs: every size-th, from its rank.
std::vector<std::size_t> share_of(std::size_t n, unsigned rank, unsigned size);

}  // namespace kbsim::core
