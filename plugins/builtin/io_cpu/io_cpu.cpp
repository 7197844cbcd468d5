// builtin.io_cpu: the IO chiplet's command processor (ADR-0036). It pays its
// overhead once per message, fans a request out to the M_CPU of every cube it
// concerns and aggregates their responses into one completion for the host.
// In this model the host's via-M_CPU memory requests use it (one cube per
// request); kernel launches, which add the start-time barrier, use the same
// fan-out.
#include <unordered_map>

#include "kbsim/ahbm/memory_node.hpp"
#include "kbsim/plugin.hpp"

namespace {

using kbsim::Ref;
using kbsim::ahbm::MemRequest;

class IoCpu final : public kbsim::ahbm::MemoryNode {
 public:
  explicit IoCpu(const kbsim::Context& ctx)
      : MemoryNode(ctx), overhead_(overhead_param(true)), commands_(stat("commands")), responses_(stat("responses")) {}

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "io_cpu";
    i.summary = "IO chiplet command processor: fans requests out to cube M_CPUs and aggregates their responses";
    i.params = {kbsim::param_float("overhead_ns", 10.0, "command processing overhead per message")};
    i.ports = {{"*", "the IO chiplet's io_noc (io_internal)"}};
    i.stats = {{"commands", kbsim::StatKind::kCounter, "requests", "requests fanned out"},
               {"responses", kbsim::StatKind::kCounter, "responses", "cube responses aggregated"}};
    return i;
  }

  void on_message(kbsim::PortIndex, Ref<kbsim::Message> msg) override {
    schedule(overhead_, 0, request(msg));  // every message pays the overhead once
  }

  void on_timer(std::uint64_t, Ref<kbsim::Message> msg) override {
    auto& r = msg->as<MemRequest>();
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

 private:
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

  kbsim::Tick overhead_;
  std::unordered_map<const MemRequest*, unsigned> pending_;
  kbsim::Stat &commands_, &responses_;
};

}  // namespace

KBSIM_PLUGIN("io_cpu") { kbsim::add_component<IoCpu>(plugin); }
