// Sweeps: a bench's points spread over the ranks of an mpirun job (every
// size-th point from its rank) and, on each, over worker processes; every
// rank gets every point's record, in the points' order.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "kbsim/bench.hpp"
#include "report/run_record.hpp"

namespace kbsim::core {

struct SweepOptions {
  unsigned jobs = 0;         ///< worker processes on this rank (0: every core; 1 under mpirun)
  bool across_ranks = true;  ///< spread over mpirun's ranks (a nested sweep runs all its points itself)
  bool progress = false;     ///< a progress line on stderr (rank 0)
};

/// Run `points` with `run_one` (given the point and its description for errors) as `o` says.
std::vector<PointRecord> sweep(const std::vector<SweepPoint>& points, const SweepOptions& o,
                               const std::function<PointRecord(const SweepPoint&, const std::string&)>& run_one);

/// Each record's result, for the bench; the records, the metrics copied, appended to `kept` (points.json writes
/// them).
std::vector<PointResult> hand_over(std::vector<PointRecord> records, std::vector<PointRecord>& kept);

/// The points of `n` that rank `rank` of `size` runs: every size-th, from its rank.
std::vector<std::size_t> share_of(std::size_t n, unsigned rank, unsigned size);

}  // namespace kbsim::core
