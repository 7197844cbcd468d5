// A placed tensor's virtual layout and MMU mappings. Shards holding the same
// piece of the tensor (replicas) share one place in the virtual range; the
// distinct pieces are laid out in shard order, each at a 64-byte-aligned offset.
#pragma once

#include <vector>

#include "kbsim/ahbm/host_command.hpp"
#include "kbsim/rt/runtime.hpp"

namespace kbsim::host_runtime {

/// The first shard of every distinct piece, in shard order.
std::vector<const rt::ShardSpec*> distinct_pieces(const std::vector<rt::ShardSpec>& shards);

/// Set every shard's va to its piece's offset from the tensor's base; returns
/// the layout's length in bytes.
std::uint64_t lay_out_va(std::vector<rt::ShardSpec>& shards);

/// The PEs holding a shard, in shard order (each once).
std::vector<kbsim::ahbm::PeRef> holders(const std::vector<rt::ShardSpec>& shards);

/// For every holder, one mapping per piece: the piece's VA to the PA of the
/// holder's own replica, else a replica in its cube, else the first replica.
std::vector<kbsim::ahbm::MmuEntry> mmu_entries(const std::vector<rt::ShardSpec>& shards);

}  // namespace kbsim::host_runtime
