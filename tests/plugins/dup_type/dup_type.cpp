// A plugin that provides a component type the builtin plugins already provide.
#include "kbsim/forwarder.hpp"
#include "kbsim/plugin.hpp"

namespace {
class Impostor final : public kbsim::Forwarder {
 public:
  using Forwarder::Forwarder;
  static kbsim::ComponentInfo info() { return base_info("forwarding", "a second 'forwarding' type"); }
};
}  // namespace

KBSIM_PLUGIN("dup_type") { kbsim::add_component<Impostor>(plugin); }
