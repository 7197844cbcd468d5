// Sweeps: a bench's points shared out over the processes of an mpirun job
// (cluster::my_share) and, on each, over worker processes; every process
// gets every point's record, in the points' order.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "kbsim/bench.hpp"
#include "report/run_record.hpp"

namespace kbsim::core {

struct SweepOptions {
  unsigned jobs = 0;             ///< worker processes here (0: every core; 1 under mpirun)
  bool across_processes = true;  ///< shared out over mpirun's processes (a nested sweep runs all its points itself)
  bool progress = false;         ///< a progress line on stderr (the first process's)
};

/// Run `points` with `run_one` (given the point and its description for errors) as `o` says.
std::vector<PointRecord> sweep(const std::vector<SweepPoint>& points, const SweepOptions& o,
                               const std::function<PointRecord(const SweepPoint&, const std::string&)>& run_one);

/// Each record's result, for the bench; the records, the metrics copied, appended to `kept` (points.json writes
/// them).
std::vector<PointResult> hand_over(std::vector<PointRecord> records, std::vector<PointRecord>& kept);

}  // namespace kbsim::core
