// The latency breakdown on a hand-made route: which part each node and link
// counts in, and the streaming term.
#include "breakdown.hpp"

#include <gtest/gtest.h>

namespace kbsim::pe_dma_perf {
namespace {

RouteHop hop(std::string_view node, std::string_view impl, double transit, std::string_view kind, double bw,
             double latency) {
  return {node, impl, transit, kind, bw, latency, 256};
}

// pe_dma -(1 ns, 256 GB/s)-> router (2 ns) -(0.5 ns, 128 GB/s, die crossing)-> UCIe port (8 ns)
// -(1 ns, unlimited)-> io_noc (3 ns) -(0.2 ns, 256 GB/s)-> hbm_ctrl (0.5 ns).
RouteInfo data_path() {
  RouteInfo r;
  r.hops = {hop("sip0.cube0.pe0.pe_dma", "builtin.pe_dma", 0.25, "pe_to_router", 256, 1.0),
            hop("sip0.cube0.r0c0", "builtin.forwarding", 2.0, "ucie_mesh", 128, 0.5),
            hop("sip0.cube0.ucie-N", "builtin.ucie", 8.0, "cube_to_io", 0, 1.0),
            hop("sip0.io0.io_noc", "builtin.forwarding", 3.0, "noc_to_hbm", 256, 0.2),
            hop("sip0.cube1.hbm_ctrl.pe0", "builtin.hbm_ctrl", 0.5, "", 0, 0)};
  return r;
}

TEST(Breakdown, EachNodeAndLinkCountsInItsPart) {
  const Breakdown b = breakdown(data_path(), nullptr, 1024, 8.0, 100.0);
  EXPECT_DOUBLE_EQ(b.pe_setup_ns, 0.25 + 1.0);            // its overhead, its link's latency
  EXPECT_DOUBLE_EQ(b.noc_mesh_ns, 2.0);                   // the router (its link crosses the die)
  EXPECT_DOUBLE_EQ(b.ucie_ns, 0.5 + 2.0 + 8.0 + 1.0);     // the crossing link, its first flit, the port and its link
  EXPECT_DOUBLE_EQ(b.fabric_ns, 3.0 + 0.2);               // the IO chiplet's NoC and its link
  EXPECT_DOUBLE_EQ(b.hbm_ctrl_ns, 0.5 + 8.0);             // its overhead and the burst's service
  EXPECT_DOUBLE_EQ(b.wire_transfer_ns, 3 * 256 / 128.0);  // 4 flits: 3 behind the first, at the bottleneck
  EXPECT_DOUBLE_EQ(b.formula_ns() + b.contention_ns, 100.0);
}

TEST(Breakdown, TheResponseAddsItsPathButNoStreaming) {
  RouteInfo back;
  back.hops = {hop("sip0.cube1.hbm_ctrl.pe0", "builtin.hbm_ctrl", 0.5, "hbm_to_router", 256, 0.3),
               hop("sip0.cube0.pe0.pe_dma", "builtin.pe_dma", 0.25, "", 0, 0)};
  const Breakdown one = breakdown(data_path(), nullptr, 1024, 8.0, 100.0);
  const Breakdown both = breakdown(data_path(), &back, 1024, 8.0, 100.0);
  EXPECT_NEAR(both.hbm_ctrl_ns - one.hbm_ctrl_ns, 0.5 + 0.3, 1e-12);
  EXPECT_NEAR(both.pe_setup_ns - one.pe_setup_ns, 0.25, 1e-12);
  EXPECT_DOUBLE_EQ(both.wire_transfer_ns, one.wire_transfer_ns);
  EXPECT_NEAR(both.contention_ns, one.contention_ns - 1.05, 1e-12);
}

}  // namespace
}  // namespace kbsim::pe_dma_perf
