// A first-fit free list over an address range, in granules: what allocates device memory (the host runtime's HBM,
// TCM and virtual ranges) and a kernel run's TCM scratch (PE_CPU). Freeing coalesces with the neighbours.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>

namespace kbsim {

/// First fit over [base, base + size); sizes round up to the granule, so every block starts on one.
class FreeList {
 public:
  FreeList(std::uint64_t base, std::uint64_t size, std::uint64_t granule) : granule_(granule) {
    if (size > 0) free_.emplace(base, size);
  }

  std::uint64_t round_up(std::uint64_t nbytes) const noexcept { return (nbytes + granule_ - 1) / granule_ * granule_; }
  /// The start of the first free block that holds round_up(nbytes), or nothing.
  std::optional<std::uint64_t> allocate(std::uint64_t nbytes) {
    const std::uint64_t n = round_up(nbytes);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      auto [start, size] = *it;
      if (size < n) continue;
      free_.erase(it);
      if (size > n) free_.emplace(start + n, size - n);
      return start;
    }
    return std::nullopt;
  }
  /// Return a block given by allocate (same nbytes). Not checked: the caller is trusted.
  void release(std::uint64_t start, std::uint64_t nbytes) {
    std::uint64_t n = round_up(nbytes);
    auto next = free_.lower_bound(start);
    if (next != free_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == start) {
        start = prev->first;
        n += prev->second;
        free_.erase(prev);
      }
    }
    if (next != free_.end() && start + n == next->first) {
      n += next->second;
      free_.erase(next);
    }
    free_.emplace(start, n);
  }
  std::uint64_t largest_free() const noexcept {
    std::uint64_t best = 0;
    for (const auto& [start, size] : free_) best = std::max(best, size);
    return best;
  }

 private:
  std::uint64_t granule_;
  std::map<std::uint64_t, std::uint64_t> free_;  ///< start -> size, sorted by start
};

}  // namespace kbsim
