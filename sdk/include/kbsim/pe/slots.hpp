// Compute slots: named counting semaphores that components of one system
// share (a PE's GEMM and MATH engines hold its one compute slot in turn).
// A service of each system, provided by the pe_services plugin.
#pragma once

#include <cstdint>
#include <string_view>

#include "kbsim/component.hpp"
#include "kbsim/services.hpp"

namespace kbsim {

class Slots : public Service {
 public:
  static constexpr std::string_view kServiceName = "slots";
  /// The slot named `name` (created with `capacity` on first use; asking
  /// again with another capacity is a SimError).
  virtual std::uint32_t slot(std::string_view name, std::uint32_t capacity) = 0;
  /// Ask `slot` for one unit for `self`: self's on_timer(tag, msg) fires once
  /// it is granted (at once when free, at priority 128); waiters are served
  /// in FIFO order. The grant restarts the op-log record of a data-op `msg`.
  virtual void acquire(std::uint32_t slot, NodeIndex self, std::uint64_t tag, Ref<Message> msg) = 0;
  /// Give one unit back; it passes straight to the next waiter, if any.
  virtual void release(std::uint32_t slot) = 0;
};

}  // namespace kbsim
