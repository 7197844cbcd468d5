// A sweep's points read back from the points.json an earlier run wrote (`kbsim run --replot DIR`): the bench draws
// its figures and tables again from them, without simulating.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kbsim/bench.hpp"
#include "report/run_record.hpp"

namespace kbsim::core {

/// The records of `dir`'s points.json, which must be the sweep `points` of bench `bench` run with the --set
/// `overrides` (as that folder's results.json says): ConfigError naming the file and the first difference otherwise.
std::vector<PointRecord> saved_points(const std::filesystem::path& dir, const std::string& bench,
                                      const std::vector<std::string>& overrides, const std::vector<SweepPoint>& points);

}  // namespace kbsim::core
