// A transfer's latency split as the reference's PE_DMA perf tooling splits it:
// the initiator's setup (pe_setup), the cube NoC (noc_mesh), the die-to-die
// crossings (ucie), the rest of the fabric (io_noc, PCIe, switch: fabric), the
// streaming of every flit but the first at the path's bottleneck
// (wire_transfer = (n_flits - 1) x flit_bytes / bottleneck bandwidth), the HBM
// controller (hbm_ctrl), and what the path alone does not explain: queueing
// behind other traffic, store-and-forward hops, the controller's own service
// (contention = actual - the rest).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "kbsim/bench.hpp"

namespace kbsim::pe_dma_perf {

struct Breakdown {
  double pe_setup_ns = 0, noc_mesh_ns = 0, ucie_ns = 0, fabric_ns = 0, wire_transfer_ns = 0, hbm_ctrl_ns = 0;
  double contention_ns = 0;  ///< actual - formula (negative: the formula overshoots)

  /// Every part but the contention residual: what the path predicts for a lone transfer.
  double formula_ns() const noexcept {
    return pe_setup_ns + noc_mesh_ns + ucie_ns + fabric_ns + wire_transfer_ns + hbm_ctrl_ns;
  }
  /// The parts in the reference's order, with their names (metrics keys without "_ns").
  std::array<std::pair<std::string_view, double>, 7> parts() const {
    return {{{"pe_setup", pe_setup_ns},
             {"noc_mesh", noc_mesh_ns},
             {"ucie", ucie_ns},
             {"fabric", fabric_ns},
             {"wire_transfer", wire_transfer_ns},
             {"hbm_ctrl", hbm_ctrl_ns},
             {"contention", contention_ns}}};
  }
};

/// The breakdown of a transfer of `bytes` that took `actual_ns`: the data went along `data` (its bottleneck link
/// sets the streaming term), the completion came back along `response` (nullptr: none), and the HBM controller
/// spent `hbm_service_ns` on the burst the completion waits for. Each node counts its transit overhead, each link
/// its latency, in the part of the node it leaves (a die-crossing link in ucie); the first flit's crossing of the
/// bottleneck counts there too. The endpoints are the PE's DMA engine and the HBM controller.
Breakdown breakdown(const RouteInfo& data, const RouteInfo* response, std::uint64_t bytes, double hbm_service_ns,
                    double actual_ns);

}  // namespace kbsim::pe_dma_perf
