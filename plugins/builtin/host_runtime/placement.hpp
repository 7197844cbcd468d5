// Where a tensor's pieces go (docs/model.md, "The host runtime"): a DPPolicy
// resolved into ShardSpecs on one SIP, and copying one shard out of / into the
// row-major tensor.
//
// A rank-1 tensor of n elements is placed as the matrix (1, n). Level 1 splits
// the tensor over cubes 0..num_cubes-1, level 2 splits each cube's part over
// PEs 0..num_pes-1. A split gives the first `n % parts` parts one row (column)
// more than the others; a tiled split cuts a grid of blocks (rt::Split). Shards come in (cube, pe) order.
#pragma once

#include <span>
#include <vector>

#include "kbsim/ahbm/memory_map.hpp"
#include "kbsim/rt/runtime.hpp"

namespace kbsim::host_runtime {

/// "replicate", "column_wise", "row_wise", "tiled_row_major" or "tiled_column_major".
const char* split_name(rt::Split s);

/// The cubes and PEs per cube a policy uses (0 resolved to "all").
struct PlacementExtent {
  unsigned cubes = 1, pes = 1;
};
PlacementExtent placement_extent(const rt::DPPolicy& dp, const kbsim::ahbm::MemoryMap& map);

/// The shards of a `shape` tensor of `dtype` on SIP `sip` (va and pa left 0).
/// Throws BenchError("BAD_USE") for a policy the device or the shape cannot satisfy.
std::vector<rt::ShardSpec> resolve_placement(const rt::DPPolicy& dp, const Shape& shape, DType dtype, unsigned sip,
                                             const kbsim::ahbm::MemoryMap& map);

/// Copy `shard`'s elements out of the row-major `tensor` into `out` (shard.nbytes long).
void gather_shard(std::span<const std::byte> tensor, const Shape& shape, DType dtype, const rt::ShardSpec& shard,
                  std::span<std::byte> out);
/// Copy a shard's contiguous bytes back into their place in the row-major `tensor`.
void scatter_shard(std::span<const std::byte> shard_bytes, const Shape& shape, DType dtype, const rt::ShardSpec& shard,
                   std::span<std::byte> tensor);

}  // namespace kbsim::host_runtime
