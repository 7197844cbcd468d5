// The host runtime (kbsim/runtime.hpp) on one simulated system.
#pragma once

#include "kbsim/runtime.hpp"

namespace kbsim::core {

class Registry;

class HostRuntime final : public rt::Runtime {
 public:
  // (to be completed)
};

}  // namespace kbsim::core
