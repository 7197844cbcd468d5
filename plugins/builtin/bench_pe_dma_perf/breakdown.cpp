#include "breakdown.hpp"

#include <cmath>
#include <string>

#include "kbsim/ahbm/names.hpp"

namespace kbsim::pe_dma_perf {

namespace {

enum class Part { kPeSetup, kNocMesh, kUcie, kFabric, kHbmCtrl };

std::string_view last_segment(std::string_view id) {
  const std::size_t dot = id.rfind('.');
  return dot == std::string_view::npos ? id : id.substr(dot + 1);
}

bool is_die_crossing(std::string_view link_kind) {
  return link_kind == "ucie_mesh" || link_kind == "cube_to_io" || link_kind == "io_to_cube";
}

/// The part a node of a route belongs to.
Part part_of(const RouteHop& h) {
  if (h.impl.find("pe_dma") != std::string_view::npos || last_segment(h.node) == "pe_dma") return Part::kPeSetup;
  if (h.impl.find("hbm_ctrl") != std::string_view::npos) return Part::kHbmCtrl;
  const std::string_view seg = last_segment(h.node);
  if (seg.substr(0, 4) == "ucie" || seg.substr(0, 7) == "io_ucie") return Part::kUcie;
  return ahbm::names::locate(h.node).cube >= 0 ? Part::kNocMesh : Part::kFabric;
}

double& slot(Breakdown& b, Part p) {
  switch (p) {
    case Part::kPeSetup: return b.pe_setup_ns;
    case Part::kNocMesh: return b.noc_mesh_ns;
    case Part::kUcie: return b.ucie_ns;
    case Part::kFabric: return b.fabric_ns;
    case Part::kHbmCtrl: return b.hbm_ctrl_ns;
  }
  return b.fabric_ns;
}

/// The part a link leaving hop `h` belongs to.
Part link_part(const RouteHop& h) { return is_die_crossing(h.link_kind) ? Part::kUcie : part_of(h); }

/// Adds one leg's node overheads and link latencies.
void add_leg(const RouteInfo& r, Breakdown& b) {
  for (std::size_t k = 0; k < r.hops.size(); ++k) {
    const RouteHop& h = r.hops[k];
    slot(b, part_of(h)) += h.transit_ns;
    if (k + 1 < r.hops.size()) slot(b, link_part(h)) += h.link_latency_ns;
  }
}

/// The data leg's slowest link (the first on a tie), or nullptr when every link is unlimited.
const RouteHop* bottleneck(const RouteInfo& data) {
  const RouteHop* bn = nullptr;
  for (std::size_t k = 0; k + 1 < data.hops.size(); ++k) {
    const RouteHop& h = data.hops[k];
    if (h.link_bw_gbs > 0 && (!bn || h.link_bw_gbs < bn->link_bw_gbs)) bn = &h;
  }
  return bn;
}

}  // namespace

Breakdown breakdown(const RouteInfo& data, const RouteInfo* response, std::uint64_t bytes, double hbm_service_ns,
                    double actual_ns) {
  Breakdown b;
  add_leg(data, b);
  if (response) add_leg(*response, b);
  b.hbm_ctrl_ns += hbm_service_ns;
  if (const RouteHop* bn = bottleneck(data); bn && bn->link_flit_bytes > 0 && bytes > 0) {
    // The first flit crosses the bottleneck as part of its path; every other flit streams behind it.
    const double flit_ns = static_cast<double>(bn->link_flit_bytes) / bn->link_bw_gbs;
    const std::uint64_t flits = (bytes + bn->link_flit_bytes - 1) / bn->link_flit_bytes;
    slot(b, link_part(*bn)) += flit_ns;
    b.wire_transfer_ns = static_cast<double>(flits - 1) * flit_ns;
  }
  b.contention_ns = actual_ns - b.formula_ns();
  return b;
}

}  // namespace kbsim::pe_dma_perf
