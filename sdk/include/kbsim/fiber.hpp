// Boost.Context fibers that AddressSanitizer follows. A fiber runs on a stack
// of its own; unless the sanitizer is told at each switch, it takes that stack
// for a wild part of the thread's and reports false errors when something is
// thrown there. Every switch goes: start_switch (with the target's stack),
// the Boost switch, then finish_switch on the other side. Outside sanitizer
// builds all of it compiles to nothing but the Boost switch.
#pragma once

#include <boost/context/fiber.hpp>
#include <boost/context/fixedsize_stack.hpp>
#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

namespace kbsim::fiber {

/// Where a stack lies (its lowest address and size).
struct StackBounds {
  const void* bottom = nullptr;
  std::size_t size = 0;
};

/// About to switch to a context whose stack is `to`; `fake` keeps this side's
/// state (nullptr: this side is finishing for good).
inline void start_switch(void** fake, const StackBounds& to) {
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_start_switch_fiber(fake, to.bottom, to.size);
#else
  (void)fake, (void)to;
#endif
}
/// Just switched in; `from` (if not null) learns the stack we came from.
inline void finish_switch(void* fake, StackBounds* from) {
#if defined(__SANITIZE_ADDRESS__)
  const void* bottom = nullptr;
  std::size_t size = 0;
  __sanitizer_finish_switch_fiber(fake, &bottom, &size);
  if (from) *from = {bottom, size};
#else
  (void)fake, (void)from;
#endif
}

/// A fixed-size stack allocator that records where the stack it gives lies.
struct RecordingStack {
  boost::context::fixedsize_stack inner;
  StackBounds* bounds;
  boost::context::stack_context allocate() {
    boost::context::stack_context sc = inner.allocate();
    *bounds = {static_cast<char*>(sc.sp) - sc.size, sc.size};
    return sc;
  }
  void deallocate(boost::context::stack_context& sc) noexcept { inner.deallocate(sc); }
};

}  // namespace kbsim::fiber
