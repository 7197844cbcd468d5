// The host runtime as a service of each AHBM system (kbsim/rt/runtime.hpp).
#include "kbsim/plugin.hpp"

#include "host_runtime.hpp"

KBSIM_PLUGIN("host_runtime") {
  kbsim::add_service<kbsim::host_runtime::HostRuntime>(
      plugin, "the host runtime: tensor placement, allocators, MMU maps, transfers over PCIe, kernel launches");
}
