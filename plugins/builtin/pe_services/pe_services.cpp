// The PE model's per-system services: the memory store (sparse pages of
// simulated memory), compute slots (semaphores the PE's compute engines
// share) and the kernel catalogue (every tl kernel the plugins registered).
#include <algorithm>

#include "kbsim/pe/kernels.hpp"
#include "kbsim/plugin.hpp"
#include "page_store.hpp"
#include "slots.hpp"

namespace kbsim::pe_services {

class Catalogue final : public KernelCatalogue {
 public:
  explicit Catalogue(System& system) {
    for (const Extension* e : system.extensions(kKernelExtension))
      kernels_.emplace_back(e->name, *static_cast<const tl::KernelFn*>(e->data.get()));
  }
  static Catalogue* create(System& system, Simulator&) { return new Catalogue(system); }

  tl::KernelFn find(std::string_view name) const override {
    for (const auto& [n, fn] : kernels_)
      if (n == name) return fn;
    return nullptr;
  }
  std::vector<std::string> names() const override {
    std::vector<std::string> out;
    for (const auto& [n, fn] : kernels_) out.push_back(n);
    return out;
  }

 private:
  std::vector<std::pair<std::string, tl::KernelFn>> kernels_;  ///< sorted by name (as the registry lists them)
};

}  // namespace kbsim::pe_services

KBSIM_PLUGIN("pe_services") {
  using namespace kbsim::pe_services;
  kbsim::add_service<PageStore>(plugin, "simulated memory contents: sparse 4 KiB pages by physical address");
  kbsim::add_service<SlotPool>(plugin, "compute slots: named semaphores a PE's compute engines hold in turn");
  kbsim::add_service<Catalogue>(plugin, "the tl kernels every loaded plugin registered, by name");
}
