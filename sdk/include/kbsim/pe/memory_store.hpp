// The data of simulated memory, addressed by 51-bit physical address: a
// service of each system (provided by the pe_services plugin).
//
// Host writes and kernel stores put bytes here at issue time (the timing
// pass's visibility rule, docs/model.md "The two-pass data model"); host
// reads and kernel loads read them back once the access's timing is
// simulated. Bytes never written read as zero.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "kbsim/services.hpp"

namespace kbsim {

class MemoryStore : public Service {
 public:
  static constexpr std::string_view kServiceName = "memory_store";
  virtual void write(std::uint64_t pa, std::span<const std::byte> data) = 0;
  virtual void read(std::uint64_t pa, std::span<std::byte> out) const = 0;
  /// Bytes currently held (pages touched x page size).
  virtual std::uint64_t resident_bytes() const noexcept = 0;
};

}  // namespace kbsim
