// A sweep's worker processes: independent bench runs spread over forked
// workers, at most `jobs` at a time. A point's outcome travels as bytes
// (encode/decode), so a result computed in a worker or in another process of the job is the
// very value a serial run gives.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "report/run_record.hpp"

namespace kbsim::core {

/// Run points 0..n-1 with `run_one`, in this process (jobs <= 1) or in `jobs`
/// forked workers, each running point after point (the next one free, in index
/// order); results in index order. A worker that dies (a crash in a plugin)
/// fails its point with `describe(i)` and the signal; another takes its place.
/// `progress` (when set) is told after each point: (done, n).
std::vector<PointRecord> run_parallel(std::size_t n, unsigned jobs,
                                      const std::function<PointRecord(std::size_t)>& run_one,
                                      const std::function<std::string(std::size_t)>& describe,
                                      const std::function<void(std::size_t, std::size_t)>& progress);

}  // namespace kbsim::core
