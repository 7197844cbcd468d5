// The AHBM system description (topology.yaml in the reference's vocabulary),
// parsed and checked. Every field has the reference default; the file
// overrides what it names. Unknown keys are errors.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "kbsim/config/yaml.hpp"
#include "kbsim/graph.hpp"

namespace kbsim::ahbm_topology {

using config::check_keys;
using config::Origins;
using config::scalar_number;
using config::scalar_value;
using config::YamlSource;

/// One block: implementation name plus attributes (component parameters).
struct BlockSpec {
  std::string impl;
  std::vector<RawParam> attrs;
  std::string origin;  ///< where `impl` was given
  std::string attach;  ///< PE template only: "dma" (data port on the PE router), "cpu" (command port) or ""
};

/// What distance routing counts for a wire of `distance_mm` given `routing_weight_mm`: the weight when set (> 0),
/// else the distance. Its timing never changes (docs/model.md, "Routes: shortest wire").
inline double route_mm(double distance_mm, double routing_weight_mm) {
  return routing_weight_mm > 0.0 ? routing_weight_mm : distance_mm;
}

struct LinkSpec {
  double bw_gbs = 0.0;  ///< 0 = unlimited
  double distance_mm = 0.0;
  double latency_ns = 0.0;         ///< added to distance_mm x ns_per_mm (e.g. SerDes and protocol latency)
  double routing_weight_mm = 0.0;  ///< see route_mm; 0: unset
  double route_mm() const { return kbsim::ahbm_topology::route_mm(distance_mm, routing_weight_mm); }
};

struct PeLinkSpec {
  std::string src, dst;  ///< PE template component names
  double bw_gbs = 0.0;
  bool bidir = true;
  std::string origin;
};

enum class Side { kN = 0, kE = 1, kS = 2, kW = 3 };
inline const char* side_name(Side s) {
  static const char* const kNames[] = {"N", "E", "S", "W"};
  return kNames[static_cast<int>(s)];
}

struct CubePort {
  unsigned x = 0, y = 0;  ///< cube position in the SIP's cube mesh
  Side side = Side::kN;
  std::string phy;  ///< e.g. "P0"
  double distance_mm = 2.0;
  double routing_weight_mm = 0.0;  ///< see route_mm; 0: unset
  std::string origin;
  double route_mm() const { return kbsim::ahbm_topology::route_mm(distance_mm, routing_weight_mm); }
};

struct IoChipletSpec {
  std::string id = "io0";
  BlockSpec pcie_ep{"builtin.pcie_ep", {}, "", ""};
  BlockSpec io_cpu{"builtin.io_cpu", {}, "", ""};
  BlockSpec io_noc{"builtin.forwarding", {}, "", ""};
  BlockSpec io_ucie{"builtin.ucie", {}, "", ""};
  BlockSpec conn{"builtin.forwarding", {}, "", ""};
  double pcie_ep_to_noc_bw_gbs = 256.0;
  double io_cpu_to_noc_bw_gbs = 256.0;
  double per_connection_bw_gbs = 128.0;
  unsigned n_connections = 4;
  std::vector<CubePort> cube_ports;
};

struct AhbmSpec {
  std::string source;  ///< file name
  double ns_per_mm = 0.1;
  std::uint32_t flit_bytes = 256;

  // system
  unsigned sips = 2;
  unsigned sip_w = 0, sip_h = 0;  ///< resolved SIP grid (for 2-D inter-SIP topologies)
  std::string sip_topology = "ring_1d";
  BlockSpec switch0{"builtin.switch", {}, "", ""};
  LinkSpec pcie{256.0, 0.0, 0.0};    ///< switch <-> pcie_ep
  std::string routing = "distance";  ///< route metric: distance (the reference's) | latency

  // sip
  unsigned cube_w = 4, cube_h = 4;
  LinkSpec ucie_link{512.0, 1.0, 0.0};  ///< cube-to-cube seam
  std::vector<IoChipletSpec> io_chiplets;

  // cube geometry and layout
  double cube_w_mm = 15.0, cube_h_mm = 15.0;
  std::string cube_w_origin, cube_h_origin;  ///< "where: cube.geometry.cube_mm.w" when given
  double pe_pitch_mm = 1.5;                  ///< spacing of the PEs of one corner
  double max_router_spacing_mm = 3.0;
  double hbm_gap_mm = 1.5;
  std::vector<std::string> corners{"NW", "NE", "SW", "SE"};
  unsigned pe_per_corner = 2;
  std::array<double, 2> m_cpu_pos_mm{1.5, 5.5};
  std::array<double, 2> sram_pos_mm{1.5, 8.5};
  unsigned ucie_connections = 4;

  // cube blocks
  BlockSpec router{"builtin.forwarding", {}, "", ""};
  BlockSpec ucie{"builtin.ucie", {}, "", ""};
  BlockSpec ucie_conn{"builtin.forwarding", {}, "", ""};
  BlockSpec m_cpu{"builtin.m_cpu", {}, "", ""};
  BlockSpec sram{"builtin.sram", {}, "", ""};
  BlockSpec hbm_ctrl{"builtin.hbm_ctrl", {}, "", ""};

  // cube links
  double router_link_bw_gbs = 256.0;
  double pe_to_router_bw_gbs = 256.0;
  double sram_to_router_bw_gbs = 128.0;
  double mcpu_to_router_bw_gbs = 128.0;
  double ucie_conn_bw_gbs = 128.0;

  // memory map
  std::string hbm_mapping_mode = "n_to_one";
  unsigned hbm_pseudo_channels = 64;
  unsigned hbm_channels_per_pe = 8;
  double hbm_channel_bw_gbs = 32.0;
  unsigned hbm_slices_per_cube = 8;
  unsigned hbm_total_gb_per_cube = 48;
  unsigned burst_bytes = 256;

  // PE template, in file order
  std::vector<std::pair<std::string, BlockSpec>> pe_components;
  std::vector<PeLinkSpec> pe_links;

  unsigned pes_per_cube() const { return static_cast<unsigned>(corners.size()) * pe_per_corner; }
  unsigned cubes_per_sip() const { return cube_w * cube_h; }
  std::uint64_t hbm_bytes_per_cube() const { return std::uint64_t{hbm_total_gb_per_cube} << 30; }
  std::uint64_t slice_bytes() const { return hbm_bytes_per_cube() / hbm_slices_per_cube; }
  double hbm_to_router_bw_gbs() const { return hbm_channels_per_pe * hbm_channel_bw_gbs; }
};

/// Parse the `system:` form. `origins` names --set overrides in errors.
AhbmSpec parse_spec(const YamlSource& src, const Origins& origins);

}  // namespace kbsim::ahbm_topology
