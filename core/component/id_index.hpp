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
    std::size_t s = h & mask_;
    for (; slots_[s] != 0; s = (s + 1) & mask_)
      if (tag(slots_[s]) == tag_of(h) && ids[node(slots_[s])] == ids[i]) return node(slots_[s]);
    slots_[s] = (std::uint64_t{tag_of(h)} << 32) | (std::uint64_t{i} + 1);
    return kNoNode;
  }
  /// The node whose id is `id`, or kNoNode.
  NodeIndex find(std::string_view id, Ids ids) const noexcept {
    if (slots_.empty()) return kNoNode;
    const std::uint64_t h = hash(id);
    for (std::size_t s = h & mask_; slots_[s] != 0; s = (s + 1) & mask_)
      if (tag(slots_[s]) == tag_of(h) && ids[node(slots_[s])] == id) return node(slots_[s]);
    return kNoNode;
  }

 private:
  static std::uint64_t hash(std::string_view id) noexcept { return std::hash<std::string_view>{}(id); }
  static std::uint32_t tag_of(std::uint64_t h) noexcept { return static_cast<std::uint32_t>(h >> 32); }
  static std::uint32_t tag(std::uint64_t slot) noexcept { return static_cast<std::uint32_t>(slot >> 32); }
  static NodeIndex node(std::uint64_t slot) noexcept { return static_cast<NodeIndex>((slot & 0xffffffffu) - 1); }

  std::vector<std::uint64_t> slots_;  ///< per slot: the hash's high half << 32 | node + 1 (0: empty)
  std::size_t mask_ = 0;              ///< slots - 1 (a power of two)
};

}  // namespace kbsim::core
