// The host's device-memory allocators (docs/model.md, "The host runtime"): a
// first-fit free list per PE HBM slice and per PE allocatable TCM (64-byte
// granules) and one device-wide virtual address range (page granules). Sizes
// round up to the granule, so every block starts on one.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <tuple>

#include "kbsim/ahbm/memory_map.hpp"
#include "kbsim/free_list.hpp"
#include "kbsim/time.hpp"
#include "kbsim/tl/tl.hpp"

namespace kbsim::host_runtime {

using kbsim::FreeList;

/// Every allocator of one device. Exhaustion throws SimError naming what ran
/// out, the size needed and the largest free block.
class DeviceAllocators {
 public:
  static constexpr std::uint64_t kHbmAlign = 64;
  static constexpr std::uint64_t kTcmAlign = 64;
  static constexpr std::uint64_t kVaBase = 0x1'0000'0000;
  static constexpr std::uint64_t kVaSize = std::uint64_t{64} << 30;

  /// A PE's allocatable TCM: offsets [begin, begin + size) of its PE_TCM sub-unit.
  struct TcmRegion {
    std::uint64_t begin = 0, size = 0;
  };
  /// The allocatable TCM of PE (sip, cube, pe), asked once per PE on its first TCM allocation.
  using TcmRegionOf = std::function<TcmRegion(unsigned sip, unsigned cube, unsigned pe)>;

  /// `tcm` empty: no PE has allocatable TCM.
  DeviceAllocators(const kbsim::ahbm::MemoryMap& map, std::uint64_t page_size, TcmRegionOf tcm = {});

  /// A PA for `nbytes` in the HBM slice of (sip, cube, pe); `now` dates an error.
  std::uint64_t allocate_hbm(unsigned sip, unsigned cube, unsigned pe, std::uint64_t nbytes, Tick now);
  void release_hbm(unsigned sip, unsigned cube, unsigned pe, std::uint64_t pa, std::uint64_t nbytes);
  /// A PA for `nbytes` in the allocatable TCM of (sip, cube, pe) (a pe_tcm_addr); `now` dates an error.
  std::uint64_t allocate_tcm(unsigned sip, unsigned cube, unsigned pe, std::uint64_t nbytes, Tick now);
  void release_tcm(unsigned sip, unsigned cube, unsigned pe, std::uint64_t pa, std::uint64_t nbytes);
  /// allocate_hbm or allocate_tcm, as `space` says; release likewise.
  std::uint64_t allocate(tl::Space space, unsigned sip, unsigned cube, unsigned pe, std::uint64_t nbytes, Tick now) {
    return space == tl::Space::kTcm ? allocate_tcm(sip, cube, pe, nbytes, now)
                                    : allocate_hbm(sip, cube, pe, nbytes, now);
  }
  void release(tl::Space space, unsigned sip, unsigned cube, unsigned pe, std::uint64_t pa, std::uint64_t nbytes) {
    if (space == tl::Space::kTcm)
      release_tcm(sip, cube, pe, pa, nbytes);
    else
      release_hbm(sip, cube, pe, pa, nbytes);
  }
  /// A page-aligned virtual range of round_up(nbytes) bytes.
  std::uint64_t allocate_va(std::uint64_t nbytes, Tick now);
  void release_va(std::uint64_t va, std::uint64_t nbytes) { va_.release(va, nbytes); }
  std::uint64_t page_size() const noexcept { return page_size_; }
  std::uint64_t va_bytes(std::uint64_t nbytes) const noexcept { return va_.round_up(nbytes); }

 private:
  FreeList& slice(unsigned sip, unsigned cube, unsigned pe);
  FreeList& tcm(unsigned sip, unsigned cube, unsigned pe);

  kbsim::ahbm::MemoryMap map_;
  std::uint64_t page_size_;
  TcmRegionOf tcm_region_;
  FreeList va_;
  std::map<std::tuple<unsigned, unsigned, unsigned>, FreeList> slices_;  ///< created on first use
  std::map<std::tuple<unsigned, unsigned, unsigned>, FreeList> tcms_;    ///< created on first use
};

}  // namespace kbsim::host_runtime
