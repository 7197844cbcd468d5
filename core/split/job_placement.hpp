// The placement of a run under mpirun (component/placement.hpp): each system
// the run builds is split over the job's ranks (partitioned once per graph,
// docs/scale-out.md), runs on the split executor, and the bench or command
// ends on every rank together. Outside mpirun, or when told not to split,
// systems are whole.
#pragma once

#include <memory>
#include <string>

#include "component/placement.hpp"

namespace kbsim::core {

/// The placement of a bench's systems: split by `method` (structure, nodes; "none" keeps them whole) when the job
/// has several ranks and the run is not `nested`. A bench that does not say it splits (`splits` false) raises,
/// when it builds a system, the ConfigError that says so.
std::unique_ptr<Placement> bench_placement(const std::string& method, bool nested, const std::string& bench,
                                           bool splits);

/// The placement of a plugin command's systems: split by structure over the job's ranks; UsageError when the job
/// has several and the command does not say it splits.
std::unique_ptr<Placement> command_placement(const std::string& command, bool splits);

/// "split: " and how a system of `elaboration` would be split over `ranks` ranks (kbsim topology --ranks N).
std::string preview_parts(const Elaboration& elaboration, unsigned ranks);

}  // namespace kbsim::core
