// The memory store: sparse 4 KiB pages of simulated memory, keyed by
// physical address. Unwritten bytes read as zero.
#pragma once

#include <array>
#include <memory>
#include <unordered_map>

#include "kbsim/pe/memory_store.hpp"

namespace kbsim::pe_services {

class PageStore final : public MemoryStore {
 public:
  static constexpr std::uint64_t kPageBytes = 4096;

  void write(std::uint64_t pa, std::span<const std::byte> data) override;
  void read(std::uint64_t pa, std::span<std::byte> out) const override;
  std::uint64_t resident_bytes() const noexcept override { return pages_.size() * kPageBytes; }
  static PageStore* create(System&, Simulator&) { return new PageStore(); }

 private:
  using Page = std::array<std::byte, kPageBytes>;
  std::unordered_map<std::uint64_t, std::unique_ptr<Page>> pages_;
};

}  // namespace kbsim::pe_services
