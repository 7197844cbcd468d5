// The host runtime as a service of each AHBM system (kbsim/rt/runtime.hpp),
// and the distributed runtime beside it (kbsim/rt/distributed.hpp), with the
// collective configuration it reads (the `ccl` section, kbsim/pe/ccl.hpp).
#include "kbsim/plugin.hpp"

#include "devices.hpp"
#include "distributed.hpp"
#include "host_runtime.hpp"

KBSIM_PLUGIN("host_runtime") {
  kbsim::add_service<kbsim::host_runtime::HostRuntime>(
      plugin, "the host runtime: tensor placement, allocators, MMU maps, transfers over PCIe, kernel launches");
  kbsim::add_service<kbsim::host_runtime::Distributed>(
      plugin, "the distributed runtime: process group (rank = SIP), IPCQ install, all_reduce, spawn, barrier");
  kbsim::add_observer<kbsim::host_runtime::DeviceFlag>(plugin);  // --device
  kbsim::add_section(plugin, kbsim::ccl::section_info());        // ccl.yaml: what the distributed runtime reads
}
