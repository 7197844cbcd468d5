// For the host-command tests of IO_CPU and M_CPU: a stand-in PE_CPU that
// answers a launch by a script instead of running a kernel, so a test can make
// PEs fail (the builtin PE_CPU stops the run on a kernel error). Swap it in with
//   --set cube.pe_template.components.pe_cpu.impl=test.scripted_pe_cpu
// after registering it (add_scripted_pe_cpu) under the library name "test".
//
// The answer leaves 100 ns x (16 - pe) + 1000 ns x cube after the launch
// arrives: in a cube, higher PEs answer first, far out of PE order; a cube's
// PEs answer after the lower cubes' (whatever their distance from IO_CPU). Kernel "fail-odd": PEs 1, 5,
// 9, 13 fail with KERNEL_FAILED, PEs 3, 7, 11, 15 with OUT_OF_MEMORY, each
// with the message "kernel 'fail-odd' failed"; any other kernel succeeds.
#pragma once

#include <memory>
#include <string>

#include "kbsim/ahbm/host_command.hpp"
#include "kbsim/plugin.hpp"
#include "kbsim/testing.hpp"

namespace kbsim::test_scripted {

class ScriptedPeCpu final : public Component {
 public:
  // The builtin PE_CPU's parameters that topology.yaml sets (accepted, unused).
  static constexpr FloatParam kDispatchNs{"dispatch_ns", 0.0, "unused"};
  static constexpr FloatParam kClockGhz{"clock_ghz", 1.0, "unused"};

  explicit ScriptedPeCpu(const ComponentContext& ctx) : Component(ctx) {}

  static ComponentInfo info() {
    ComponentInfo i;
    i.type = "scripted_pe_cpu";
    i.summary = "test stand-in for pe_cpu: answers launches by a script";
    i.params = {kDispatchNs, kClockGhz};
    i.ports = {{"command", "launches and their answers"}, {"pe_internal", "unused"}};
    return i;
  }

  void setup() override {
    self_ = *ahbm::pe_of(id());
    memory_view_ = find_view("memory");
  }

  void on_message(PortIndex, Ref<Message> msg) override {
    if (!msg->is<ahbm::HostCommand>() || msg->as<ahbm::HostCommand>().is_response) fail("expects launches only");
    schedule(ns_to_ticks(100.0 * (16 - self_.pe) + 1000.0 * self_.cube), 0, std::move(msg));
  }

  void on_timer(std::uint64_t, Ref<Message> msg) override {
    Ref<ahbm::HostCommand> answer(&msg->as<ahbm::HostCommand>());
    if (answer->kernel == "fail-odd" && self_.pe % 2 == 1) {
      answer->completion = {false, self_.pe % 4 == 1 ? "KERNEL_FAILED" : "OUT_OF_MEMORY",
                            "kernel '" + answer->kernel + "' failed"};
    } else {
      ahbm::PeResult r;
      r.pe = self_;
      r.start = r.end = now();
      answer->results = {r};
    }
    answer->is_response = true;
    answer->bytes = 0;
    const Route& back = route_to(answer->initiator, memory_view_);
    answer->route = &back;
    send(back.ports.front(), std::move(answer));
  }

 private:
  ahbm::PeRef self_;
  ViewId memory_view_ = 0;
};

/// kbsim's own plugins plus the scripted PE_CPU (implementation "test.scripted_pe_cpu"), loaded once.
inline const testkit::Plugins& plugins_with_scripted_pe_cpu() {
  static const std::unique_ptr<testkit::Plugins> loaded = [] {
    auto p = std::make_unique<testkit::Plugins>();
    PluginDescriptor here{};
    add_component<ScriptedPeCpu>(here);
    p->add(std::move(here), "test");
    return p;
  }();
  return *loaded;
}

inline constexpr const char* kSwapPeCpu = "cube.pe_template.components.pe_cpu.impl=test.scripted_pe_cpu";

}  // namespace kbsim::test_scripted
