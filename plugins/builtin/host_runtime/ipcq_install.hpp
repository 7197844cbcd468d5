// From a CCL algorithm's wiring to every PE's queue table (docs/model.md,
// "IPCQ"): each PE's directions in address order, each direction's rx ring,
// the reverse direction of every wire, and the install-time invariants
// (I3: no two senders share one rx ring; I3.1: rx rings are disjoint).
#pragma once

#include <map>
#include <vector>

#include "kbsim/pe/ccl.hpp"
#include "kbsim/pe/ipcq.hpp"

namespace kbsim::host_runtime {

struct PeLess {
  bool operator()(const ahbm::PeRef& a, const ahbm::PeRef& b) const noexcept {
    return std::tie(a.sip, a.cube, a.pe) < std::tie(b.sip, b.cube, b.pe);
  }
};
using QueueTables = std::map<ahbm::PeRef, std::vector<pe::IpcqQueue>, PeLess>;

/// Every wired PE's queues; ConfigError (naming the PEs and directions) when
/// the wiring breaks a rule.
QueueTables plan_queues(const std::vector<ccl::Wire>& wires, const pe::IpcqConfig& cfg);

/// The IPCQ configuration in a CCL algorithm's parameters (kbsim/pe/ccl.hpp); ConfigError (naming the ccl.yaml
/// place) for a value out of range.
pe::IpcqConfig ipcq_config(const Params& p);

}  // namespace kbsim::host_runtime
