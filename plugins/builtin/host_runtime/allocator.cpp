#include "allocator.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "kbsim/ahbm/names.hpp"
#include "kbsim/text.hpp"

namespace kbsim::host_runtime {

namespace {
[[noreturn]] void exhausted(const std::string& what, std::uint64_t need, std::uint64_t largest, Tick now) {
  throw SimError("allocator: " + what + " exhausted: need " + std::to_string(need) + " bytes, largest free block " +
                 std::to_string(largest) + " (at t=" + format_ns(ticks_to_ns(now)) + " ns)");
}
}  // namespace

DeviceAllocators::DeviceAllocators(const kbsim::ahbm::MemoryMap& map, std::uint64_t page_size, TcmRegionOf tcm)
    : map_(map), page_size_(page_size), tcm_region_(std::move(tcm)), va_(kVaBase, kVaSize, page_size) {}

FreeList& DeviceAllocators::slice(unsigned sip, unsigned cube, unsigned pe) {
  auto key = std::make_tuple(sip, cube, pe);
  auto it = slices_.find(key);
  if (it == slices_.end()) {
    const std::uint64_t begin = std::uint64_t{pe} * map_.slice_bytes;
    const std::uint64_t cap =
        begin >= map_.hbm_bytes_per_cube ? 0 : std::min(map_.slice_bytes, map_.hbm_bytes_per_cube - begin);
    it = slices_.emplace(key, FreeList(0, cap, kHbmAlign)).first;
  }
  return it->second;
}

std::uint64_t DeviceAllocators::allocate_hbm(unsigned sip, unsigned cube, unsigned pe, std::uint64_t nbytes, Tick now) {
  FreeList& s = slice(sip, cube, pe);
  std::optional<std::uint64_t> off = s.allocate(nbytes);
  if (!off) exhausted(kbsim::ahbm::names::pe(sip, cube, pe) + " HBM slice", s.round_up(nbytes), s.largest_free(), now);
  return kbsim::ahbm::pe_hbm_addr(sip, cube, pe, *off, map_.slice_bytes);
}

void DeviceAllocators::release_hbm(unsigned sip, unsigned cube, unsigned pe, std::uint64_t pa, std::uint64_t nbytes) {
  slice(sip, cube, pe).release(pa - kbsim::ahbm::pe_hbm_addr(sip, cube, pe, 0, map_.slice_bytes), nbytes);
}

FreeList& DeviceAllocators::tcm(unsigned sip, unsigned cube, unsigned pe) {
  auto key = std::make_tuple(sip, cube, pe);
  auto it = tcms_.find(key);
  if (it == tcms_.end()) {
    const TcmRegion r = tcm_region_ ? tcm_region_(sip, cube, pe) : TcmRegion{};
    it = tcms_.emplace(key, FreeList(r.begin, r.size, kTcmAlign)).first;
  }
  return it->second;
}

std::uint64_t DeviceAllocators::allocate_tcm(unsigned sip, unsigned cube, unsigned pe, std::uint64_t nbytes, Tick now) {
  FreeList& t = tcm(sip, cube, pe);
  std::optional<std::uint64_t> off = t.allocate(nbytes);
  if (!off)
    exhausted(kbsim::ahbm::names::pe(sip, cube, pe) + " allocatable TCM", t.round_up(nbytes), t.largest_free(), now);
  return kbsim::ahbm::pe_tcm_addr(sip, cube, pe, *off);
}

void DeviceAllocators::release_tcm(unsigned sip, unsigned cube, unsigned pe, std::uint64_t pa, std::uint64_t nbytes) {
  tcm(sip, cube, pe).release(pa - kbsim::ahbm::pe_tcm_addr(sip, cube, pe, 0), nbytes);
}

std::uint64_t DeviceAllocators::allocate_va(std::uint64_t nbytes, Tick now) {
  std::optional<std::uint64_t> va = va_.allocate(nbytes);
  if (!va) exhausted("device virtual address space", va_.round_up(nbytes), va_.largest_free(), now);
  return *va;
}

}  // namespace kbsim::host_runtime
