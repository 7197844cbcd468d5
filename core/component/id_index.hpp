// A system's nodes by id: an open-addressing table of node indices, the ids
// themselves kept by the elaboration. Elaborating a large system looks up both
// ends of every edge; std::unordered_map spent most of that time following its
// chains through memory (a list node, then the key's characters), where a probe
// here reads one slot, and the id only when the slot's hash matches.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "kbsim/component.hpp"

namespace kbsim::core {

class IdIndex {
 public:
  using Ids = std::span<const std::string_view>;  ///< node i's id is ids[i]

  /// Room for `nodes` nodes without growing (it never grows: insert no more).
  void reserve(std::size_t nodes) {
    std::size_t capacity = 16;
    while (capacity < 2 * nodes) capacity *= 2;
    slots_.assign(capacity, 0);
    mask_ = capacity - 1;
  }
  /// Index node `i` by ids[i]: kNoNode, or the node already indexed by the same id (then `i` is not).
  NodeIndex insert(NodeIndex i, Ids ids) {
    const std::uint64_t h = hash(ids[i]);
    std::uint64_t& slot = slots_[probe(ids[i], h, ids)];
    if (slot != 0) return node(slot);
    slot = (h & kHigh) | (std::uint64_t{i} + 1);
    return kNoNode;
  }
  /// The node whose id is `id`, or kNoNode.
  NodeIndex find(std::string_view id, Ids ids) const noexcept {
    if (slots_.empty()) return kNoNode;
    const std::uint64_t slot = slots_[probe(id, hash(id), ids)];
    return slot != 0 ? node(slot) : kNoNode;
  }

 private:
  static constexpr std::uint64_t kHigh = 0xffffffff00000000u;  ///< the hash's half a slot keeps
  static std::uint64_t hash(std::string_view id) noexcept { return std::hash<std::string_view>{}(id); }
  static NodeIndex node(std::uint64_t slot) noexcept { return static_cast<NodeIndex>((slot & ~kHigh) - 1); }
  /// The slot holding `id` (whose hash is `h`), or the empty one where it would go.
  std::size_t probe(std::string_view id, std::uint64_t h, Ids ids) const noexcept {
    std::size_t s = h & mask_;
    while (slots_[s] != 0 && (((slots_[s] ^ h) & kHigh) != 0 || ids[node(slots_[s])] != id)) s = (s + 1) & mask_;
    return s;
  }

  std::vector<std::uint64_t> slots_;  ///< per slot: the hash's high half, and node + 1 in the low (0: empty)
  std::size_t mask_ = 0;              ///< slots - 1 (a power of two)
};

}  // namespace kbsim::core
