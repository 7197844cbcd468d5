// results.json, topology.json and points.json of a finished run, with the
// bench's own files and the op log, written all or nothing.
#pragma once

#include <filesystem>

#include "report/run_record.hpp"

namespace kbsim::core {

class Registry;

/// Write `run`'s output files into `dir` (created if needed), then let its observers commit theirs. Every file goes
/// to a temporary name first and all are renamed into place only when all were written; on any failure none is left.
void write_results(const std::filesystem::path& dir, const RunRecord& run, const Registry& registry);

}  // namespace kbsim::core
