// builtin.io_cpu: the IO chiplet's command processor (docs/model.md,
// "IO chiplet and cube blocks"). It pays its overhead once per message, fans a
// request out to the M_CPU of every cube it concerns and aggregates their
// responses into one completion for the host. The host's via-M_CPU memory
// requests use it (one cube per request), and so do host commands
// (docs/model.md, "Host commands and the launch barrier"): kernel launches,
// which it stamps with the start-time barrier, and MMU mapping updates. It is
// the entry of host commands: one stated for another SIP's device is refused
// (WRONG_DEVICE), never fanned out.
#include <map>
#include <unordered_map>
#include <utility>

#include "kbsim/ahbm/command_node.hpp"
#include "kbsim/plugin.hpp"

namespace {

using kbsim::Ref;
using kbsim::Tick;
using kbsim::ahbm::HostCommand;
using kbsim::ahbm::MemRequest;
using kbsim::ahbm::PeRef;
namespace names = kbsim::ahbm::names;

constexpr kbsim::FloatParam kOverheadNs{"overhead_ns", 10.0, "command processing overhead per message"};

class IoCpu final : public kbsim::ahbm::CommandNode {
 public:
  explicit IoCpu(const kbsim::ComponentContext& ctx)
      : CommandNode(ctx, kOverheadNs, kStatResponses),
        commands_(stat(kStatCommands)),
        responses_(stat(kStatResponses)) {}

  // Statistics, declared once: info() lists them, stat() binds them.
  static constexpr kbsim::StatDef kStatCommands{"commands", kbsim::StatKind::kCounter, "requests",
                                                "requests and host commands fanned out"};
  static constexpr kbsim::StatDef kStatResponses{"responses", kbsim::StatKind::kCounter, "responses",
                                                 "cube responses aggregated"};

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "io_cpu";
    i.summary =
        "IO chiplet command processor: fans memory requests, kernel launches (stamped with the start barrier) and MMU "
        "updates out to cube M_CPUs and aggregates their answers";
    i.params = {kOverheadNs};
    i.ports = {{"io_internal", "to and from the IO chiplet's io_noc"}};
    i.stats = {kStatCommands, kStatResponses};
    return i;
  }

 private:
  void on_memory(MemRequest& r) override {
    if (r.is_response) return collect(r);
    // Fan out: one leg per target cube (a memory request has exactly one).
    ++commands_.count;
    auto c = kbsim::ahbm::check_access(memory_map(), r.pa, r.nbytes);
    if (!c.ok) fail("received an unchecked request: " + c.error);
    Ref<MemRequest> leg = split(r);
    leg->initiator = index();
    leg->target = find_node(kbsim::ahbm::names::m_cpu(c.target.addr.sip, c.target.cube));
    leg->view = 0;
    pending_[&r] = 1;
    launch(std::move(leg), 0);
  }

  void on_command(Ref<HostCommand> cmd) override {
    ++commands_.count;
    const auto what = [](HostCommand::Kind k) -> std::string_view {
      switch (k) {
        case HostCommand::Kind::kLaunch: return "a kernel launch";
        case HostCommand::Kind::kMmuMap: return "an MMU map";
        case HostCommand::Kind::kMmuUnmap: return "an MMU unmap";
      }
      return "a host command";
    };
    if (auto refused = kbsim::ahbm::wrong_device(cmd->target_device, where().sip, id(), what(cmd->kind))) {
      cmd->completion = std::move(*refused);
      return answer(std::move(cmd));
    }
    // One leg per cube, in (sip, cube) order; launches get the start barrier first.
    std::map<std::pair<unsigned, unsigned>, std::vector<PeRef>> cubes;
    for (const PeRef& pe : cmd->targets) cubes[{pe.sip, pe.cube}].push_back(pe);
    std::string_view part = cmd->kind == HostCommand::Kind::kLaunch ? "pe_cpu" : "pe_mmu";
    std::vector<kbsim::NodeIndex> m_cpus;
    Tick barrier = 0;
    try {
      for (const auto& [cube, pes] : cubes) {
        m_cpus.push_back(find_node(names::m_cpu(cube.first, cube.second)));
        const kbsim::Route& leg1 = route_to(m_cpus.back(), memory_view());
        for (const PeRef& pe : pes) {
          kbsim::NodeIndex target = find_node(names::pe_part(pe.sip, pe.cube, pe.pe, part));
          if (cmd->kind == HostCommand::Kind::kLaunch)
            barrier = std::max(barrier, two_leg_latency(leg1, route_between(m_cpus.back(), target, memory_view())));
        }
      }
    } catch (const kbsim::ConfigError& e) {
      cmd->completion = {false, "NO_TARGET", e.what()};
    }
    if (cubes.empty()) cmd->completion = {false, "NO_TARGET", "the command names no target PE"};
    if (!cmd->completion.ok) return answer(std::move(cmd));
    if (cmd->kind == HostCommand::Kind::kLaunch) {
      cmd->has_start = true;
      cmd->target_start = now() + barrier;
    }
    expect_answers(*cmd, static_cast<unsigned>(cubes.size()));
    std::size_t k = 0;
    for (auto& [cube, pes] : cubes) send_leg(cmd->leg(std::move(pes)), m_cpus[k++]);
  }

  /// The launch barrier's leg time (docs/model.md,
  /// "Host commands and the launch barrier"): a 0-byte message's time from here
  /// through the M_CPU (paying its overhead, its transit cost, once) to the PE.
  Tick two_leg_latency(const kbsim::Route& leg1, const kbsim::Route& leg2) const {
    kbsim::Route r = leg1;
    r.nodes.insert(r.nodes.end(), leg2.nodes.begin() + 1, leg2.nodes.end());
    r.ports.insert(r.ports.end(), leg2.ports.begin(), leg2.ports.end());
    return control_latency(r);
  }

  void collect(MemRequest& leg) {
    ++responses_.count;
    Ref<MemRequest> parent = leg.parent;
    if (!parent || !pending_.count(parent.get())) fail("a response arrived for a request it did not fan out");
    if (!leg.completion.ok) parent->completion = leg.completion;
    parent->t_serviced = std::max(parent->t_serviced, leg.t_serviced);
    if (--pending_[parent.get()] > 0) return;
    pending_.erase(parent.get());
    leg.parent.reset();
    reply(std::move(parent), 0);
  }

  std::unordered_map<const MemRequest*, unsigned> pending_;
  kbsim::Stat &commands_, &responses_;
};

}  // namespace

KBSIM_PLUGIN("io_cpu") { kbsim::add_component<IoCpu>(plugin); }
