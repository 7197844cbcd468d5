// test.thrower: a component that throws from the stage its `stage` parameter
// names (construct, setup, timer, finish), either a std::runtime_error or an
// int (`what`: std or int). kbsim must name it, its library and the sim time.
#include <csignal>
#include <stdexcept>
#include <string>

#include "kbsim/plugin.hpp"

namespace {

class Thrower final : public kbsim::Component {
 public:
  explicit Thrower(const kbsim::ComponentContext& ctx) : Component(ctx) { maybe_throw("construct"); }
  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "thrower";
    i.summary = "test component that throws from one stage";
    i.params = {kbsim::param_string("stage", "timer", "construct, setup, timer or finish"),
                kbsim::param_string("what", "std", "std (a std::runtime_error), int, or segv (a fatal signal)")};
    return i;
  }
  void setup() override {
    maybe_throw("setup");
    schedule(kbsim::ns_to_ticks(5), 0, {});
  }
  void on_timer(std::uint64_t, kbsim::Ref<kbsim::Message>) override { maybe_throw("timer"); }
  void finish() override { maybe_throw("finish"); }

 private:
  void maybe_throw(const char* stage) {
    if (params().get_string("stage") != stage) return;
    if (params().get_string("what") == "int") throw 42;
    if (params().get_string("what") == "segv") std::raise(SIGSEGV);
    throw std::runtime_error(std::string("thrown from ") + stage);
  }
};

/// test.picky: takes only its own message type, as a component reading its payload does.
struct Picky final : kbsim::Message {
  static constexpr std::string_view kName = "test.Picky";
  static constexpr kbsim::TypeId kType = kbsim::type_id(kName);
  Picky() : Message(kType) {}
};

class PickyReader final : public kbsim::Component {
 public:
  using Component::Component;
  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "picky";
    i.summary = "test component that reads every message as a test.Picky";
    i.ports = {{"*", "any link"}};
    return i;
  }
  void on_message(kbsim::PortIndex, kbsim::Ref<kbsim::Message> msg) override { (void)msg->as<Picky>(); }
};

}  // namespace

KBSIM_PLUGIN("test_thrower") {
  kbsim::add_component<Thrower>(plugin);
  kbsim::add_component<PickyReader>(plugin);
}
