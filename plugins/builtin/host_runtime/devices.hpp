// `--device all|sip:N` (docs/model.md, "Devices"): the flag, and the SIPs it
// selects. Runtime::on_devices (devices.cpp) runs a single-device bench on them.
#pragma once

#include <string>
#include <vector>

#include "kbsim/observer.hpp"

namespace kbsim::host_runtime {

/// The SIPs `selector` names on a system of `sips` ("all" or "sip:N"); UsageError naming the flag otherwise.
std::vector<unsigned> selected_devices(const std::string& selector, unsigned sips);

/// Declares --device (flags are declared by observers); it observes nothing: the benches that run on a device
/// read the flag (Runtime::on_devices), the others ignore it, as the reference's do.
class DeviceFlag final : public RunObserver {
 public:
  static ObserverInfo info();
  static DeviceFlag* create(const RunRequest&) { return nullptr; }
};

}  // namespace kbsim::host_runtime
