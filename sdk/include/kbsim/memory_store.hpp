// The data of simulated memory, addressed by 51-bit physical address.
//
// Host writes and kernel stores put bytes here at issue time (ADR-0020's
// visibility rule); host reads and kernel loads read them back once the
// access's timing is simulated. Bytes never written read as zero.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace kbsim {

class MemoryStore {
 public:
  virtual void write(std::uint64_t pa, std::span<const std::byte> data) = 0;
  virtual void read(std::uint64_t pa, std::span<std::byte> out) const = 0;
  /// Bytes currently held (pages touched x page size).
  virtual std::uint64_t resident_bytes() const noexcept = 0;

 protected:
  ~MemoryStore() = default;
};

}  // namespace kbsim
