// test_delay, variant b: a store-and-forward delay element, 10 ns plus 1 ns per started 256 bytes.
// Variants a and b build libraries of the same file name and type, so the
// plugin directory alone decides which one a run uses.
#include "kbsim/plugin.hpp"

namespace {
class Delay final : public kbsim::Component {
 public:
  explicit Delay(const kbsim::ComponentContext& ctx) : Component(ctx) {}
  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "test_delay";
    i.summary = "test delay element (b): 10 ns plus 1 ns per started 256 bytes";
    i.ports = {{"*", "any"}};
    return i;
  }
  void on_message(kbsim::PortIndex, kbsim::Ref<kbsim::Message> msg) override {
    kbsim::Tick delay = kbsim::ns_to_ticks(10.0 + static_cast<double>((msg->bytes + 255) / 256));
    kbsim::PortIndex out = msg->route->out_port_at(index());
    send(out, std::move(msg), delay);
  }
};
}  // namespace

KBSIM_PLUGIN("test_delay_b") { kbsim::add_component<Delay>(plugin); }
