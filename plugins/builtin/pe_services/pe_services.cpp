// The PE model's per-system services: the memory store (sparse pages of
// simulated memory), compute slots (semaphores the PE's compute engines
// share) and the kernel catalogue (every tl kernel the plugins registered).
#include <algorithm>
#include <map>

#include "kbsim/pe/kernels.hpp"
#include "kbsim/plugin.hpp"
#include "page_store.hpp"
#include "slots.hpp"

namespace kbsim::pe_services {

class Catalogue final : public KernelCatalogue {
 public:
  explicit Catalogue(System& system) : system_(system) {}
  static Catalogue* create(System& system, Simulator&) { return new Catalogue(system); }

  /// Found on first use (only its plugin is loaded), then kept: a launch per PE asks for it again.
  tl::KernelFn find(std::string_view name) const override {
    auto it = found_.find(name);
    if (it == found_.end()) {
      const Extension* e = system_.extension(kKernelExtension, name);
      if (!e) return nullptr;  // (not kept: the launch fails)
      it = found_.emplace(std::string(name), *static_cast<const tl::KernelFn*>(e->data.get())).first;
    }
    return it->second;
  }
  std::vector<std::string> names() const override {
    std::vector<std::string> out;
    for (const Extension* e : system_.extensions(kKernelExtension)) out.push_back(e->name);
    return out;
  }

 private:
  System& system_;
  mutable std::map<std::string, tl::KernelFn, std::less<>> found_;
};

}  // namespace kbsim::pe_services

KBSIM_PLUGIN("pe_services") {
  using namespace kbsim::pe_services;
  kbsim::add_service<PageStore>(plugin, "simulated memory contents: sparse 4 KiB pages by physical address");
  kbsim::add_service<SlotPool>(plugin, "compute slots: named semaphores a PE's compute engines hold in turn");
  kbsim::add_service<Catalogue>(plugin, "the tl kernels every loaded plugin registered, by name");
}
