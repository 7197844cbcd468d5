// The kernel catalogue: tl kernels (kbsim/tl/tl.hpp) that plugins register by
// name, and the service PE_CPU and the host runtime find them through.
//
//   KBSIM_PLUGIN("my_kernels") { kbsim::add_kernel(plugin, "my-kernel", &my_kernel, "what it does"); }
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kbsim/plugin.hpp"
#include "kbsim/services.hpp"
#include "kbsim/tl/tl.hpp"

namespace kbsim {

/// The extension kind kernels are registered under (`kbsim list kernels`).
inline constexpr std::string_view kKernelExtension = "kernel";

inline void add_kernel(PluginDescriptor& plugin, std::string name, tl::KernelFn fn, std::string summary) {
  plugin.extensions.push_back({std::string(kKernelExtension), std::move(name), std::move(summary),
                               std::make_shared<const tl::KernelFn>(std::move(fn))});
}

/// The kernels every loaded plugin registered, as a service of a system.
class KernelCatalogue : public Service {
 public:
  static constexpr std::string_view kServiceName = "kernel_catalogue";
  /// The kernel registered under `name`, or nullptr.
  virtual tl::KernelFn find(std::string_view name) const = 0;
  /// Every registered name, sorted.
  virtual std::vector<std::string> names() const = 0;
};

}  // namespace kbsim
