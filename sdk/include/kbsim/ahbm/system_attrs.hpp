// The system attributes the AHBM topology front-end publishes (Graph::attrs)
// and the AHBM blocks, runtimes and benches read: each declared once, with its
// type, the default a reader that can do without it uses, and its meaning.
// Publish with put_attr, read with attr / attr_or (kbsim/graph.hpp).
#pragma once

#include "kbsim/graph.hpp"

namespace kbsim::ahbm::attrs {

inline constexpr IntParam kSips{"ahbm.sips", 1, "SIPs in the system"};
inline constexpr IntParam kSipW{"ahbm.sip_w", 1, "columns of the SIP grid (ring_1d: the SIP count)"};
inline constexpr IntParam kSipH{"ahbm.sip_h", 1, "rows of the SIP grid"};
inline constexpr StringParam kSipTopology{"ahbm.sip_topology", "ring_1d",
                                          "how SIPs connect: ring_1d, torus_2d or mesh_2d_no_wrap"};
inline constexpr IntParam kCubeW{"ahbm.cube_w", 1, "columns of a SIP's cube mesh"};
inline constexpr IntParam kCubeH{"ahbm.cube_h", 1, "rows of a SIP's cube mesh"};
inline constexpr IntParam kCubesPerSip{"ahbm.cubes_per_sip", 16, "cubes per SIP"};
inline constexpr IntParam kPesPerCube{"ahbm.pes_per_cube", 8, "PEs per cube (= HBM slices per cube)"};
inline constexpr IntParam kIoChiplets{"ahbm.io_chiplets", 1, "IO chiplets per SIP"};
inline constexpr IntParam kHbmBytesPerCube{"ahbm.hbm_bytes_per_cube", std::int64_t{48} << 30, "HBM bytes per cube"};
inline constexpr IntParam kHbmSliceBytes{"ahbm.hbm_slice_bytes", std::int64_t{6} << 30, "HBM bytes per PE slice"};
inline constexpr IntParam kHbmChannelsPerPe{"ahbm.hbm_channels_per_pe", 8, "HBM pseudo-channels per PE slice"};
inline constexpr FloatParam kHbmChannelBwGbs{"ahbm.hbm_channel_bw_gbs", 32.0, "bandwidth of one pseudo-channel"};
inline constexpr IntParam kBurstBytes{"ahbm.burst_bytes", 256, "HBM burst and pseudo-channel striping unit"};
inline constexpr FloatParam kNsPerMm{"ahbm.ns_per_mm", 0.1, "wire delay per mm of the topology"};

}  // namespace kbsim::ahbm::attrs
