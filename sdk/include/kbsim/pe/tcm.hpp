// How a PE's TCM is split (docs/model.md, "The host runtime", "TCM tensors";
// the reference's SchedulerReservedTCM / AllocatableTCM): its bottom part is
// kept for the PE's kernels, the rest is what the host may allocate tensors in.
// PE_TCM blocks publish it; the host runtime asks for it.
#pragma once

#include <cstdint>

#include "kbsim/component.hpp"

namespace kbsim::pe {

class TcmLayout {
 public:
  /// The TCM's size: offsets [0, tcm_bytes) of its PE's PE_TCM sub-unit.
  virtual std::uint64_t tcm_bytes() const noexcept = 0;
  /// Offsets [0, reserved_bytes) are the scheduler-reserved TCM (kernel scratch and tile buffers), which the host
  /// never allocates in; [reserved_bytes, tcm_bytes) is the allocatable TCM.
  virtual std::uint64_t reserved_bytes() const noexcept = 0;

 protected:
  ~TcmLayout() = default;
};

/// The TCM layout a component publishes, or nullptr.
inline const TcmLayout* as_tcm_layout(Component& c) { return dynamic_cast<const TcmLayout*>(&c); }

}  // namespace kbsim::pe
