// lrab_hierarchical_allreduce (see lrab.cpp): the algorithm's declaration,
// shared by the plugin and its tests.
#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

#include "kbsim/pe/ccl.hpp"

namespace kbsim::ccl_lrab {

/// The kernel's own arguments (after the runtime's tensor, rank, world and n_elem).
struct LrabArgs {
  std::int64_t cube_w = 1, cube_h = 1;  ///< the cube grid the shards cover
  std::int64_t topology = 0;            ///< ccl::SipTopology
  std::int64_t sip_w = 0, sip_h = 0;    ///< the SIP grid (0 on a ring)
  std::int64_t corner = 0;              ///< 1: the root is the south-east cube, not the center
  static constexpr auto fields = std::make_tuple(&LrabArgs::cube_w, &LrabArgs::cube_h, &LrabArgs::topology,
                                                 &LrabArgs::sip_w, &LrabArgs::sip_h, &LrabArgs::corner);
};

/// Its parameter beside the shared ones.
inline constexpr StringParam kRoot{"root", "center",
                                   "root cube of each SIP: center ((h//2)*w + w//2, the reference's) or corner "
                                   "(the south-east cube)"};

class Lrab final : public ccl::Algorithm {
 public:
  static ccl::AlgorithmInfo info();
  /// pe0 of every cube of every rank: N/S/E/W to its cube-mesh neighbours (no wrap), and the SIP topology's
  /// global_* directions to pe0 of the same cube on the neighbouring SIPs (ccl::sip_neighbors).
  std::vector<ccl::Wire> wiring(const ccl::Setup& s) const override;
  /// One shard per message.
  std::uint64_t min_slot_size(const ccl::Collective& c) const override;
  /// Kernel lrab-allreduce on the cube grid the shards cover (1 x 1 for a tensor on one cube: the single-cube
  /// path, straight to the inter-SIP exchange).
  ccl::Launch launch(const ccl::Collective& c) const override;

 private:
  static int root(const Params& p);
};

}  // namespace kbsim::ccl_lrab
