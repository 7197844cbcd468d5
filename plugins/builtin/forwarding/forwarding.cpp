// builtin.forwarding (also builtin.switch, builtin.noc, builtin.ucie): the
// generic transit node. Wormhole forwarding along the message's route with a
// per-transaction overhead; all behaviour comes from kbsim::Forwarder.
#include "kbsim/forwarder.hpp"
#include "kbsim/plugin.hpp"

namespace {

class Forwarding final : public kbsim::Forwarder {
 public:
  using Forwarder::Forwarder;
  static kbsim::ComponentInfo info() {
    return base_info("forwarding",
                     "transit node: forwards flit by flit along the route, overhead once per transaction");
  }
};

}  // namespace

KBSIM_PLUGIN("forwarding") { kbsim::add_component<Forwarding>(plugin); }
