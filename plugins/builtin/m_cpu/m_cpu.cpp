// builtin.m_cpu: the cube's management CPU (docs/model.md,
// "IO chiplet and cube blocks"). It pays its overhead once per message. Memory
// requests relayed by io_cpu go out through its DMA (M_CPU.DMA) to the serving
// node, and the response goes back to io_cpu when the transfer completes. The
// reference's DMA read and write resources of capacity 1 serialize only the
// zero-time dispatch step, not the transfer; here the outgoing link's FIFO does
// that, so the DMA keeps no state of its own.
//
// Host commands (docs/model.md, "Host commands and the launch barrier") fan out
// to the PEs of the cube: a 0-byte leg per PE to its PE_CPU (launch) or PE_MMU
// (mapping update); the answers are merged into one for IO_CPU. A launch keeps
// the start time IO_CPU stamped; one submitted here directly gets a barrier
// over this cube's PEs.
#include "kbsim/ahbm/command_node.hpp"
#include "kbsim/plugin.hpp"

namespace {

using kbsim::Ref;
using kbsim::Tick;
using kbsim::ahbm::HostCommand;
using kbsim::ahbm::MemOp;
using kbsim::ahbm::MemRequest;
using kbsim::ahbm::PeRef;
namespace names = kbsim::ahbm::names;

constexpr kbsim::FloatParam kOverheadNs{"overhead_ns", 5.0, "processing overhead per message"};

class MCpu final : public kbsim::ahbm::CommandNode {
 public:
  explicit MCpu(const kbsim::ComponentContext& ctx)
      : CommandNode(ctx, kOverheadNs, kStatAnswers),
        dma_reads_(stat(kStatDmaReads)),
        dma_writes_(stat(kStatDmaWrites)),
        responses_(stat(kStatResponses)),
        commands_(stat(kStatCommands)) {}

  // Statistics, declared once: info() lists them, stat() binds them.
  static constexpr kbsim::StatDef kStatDmaReads{"dma_reads", kbsim::StatKind::kCounter, "transfers",
                                                "DMA reads dispatched"};
  static constexpr kbsim::StatDef kStatDmaWrites{"dma_writes", kbsim::StatKind::kCounter, "transfers",
                                                 "DMA writes dispatched"};
  static constexpr kbsim::StatDef kStatResponses{"responses", kbsim::StatKind::kCounter, "responses",
                                                 "DMA completions relayed back"};
  static constexpr kbsim::StatDef kStatCommands{"commands", kbsim::StatKind::kCounter, "commands",
                                                "host commands fanned out to PEs"};
  static constexpr kbsim::StatDef kStatAnswers{"answers", kbsim::StatKind::kCounter, "answers",
                                               "PE answers to host commands merged"};

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "m_cpu";
    i.summary = "cube management CPU: relays commands to its PEs and memory requests through its DMA";
    i.params = {kOverheadNs};
    i.ports = {{"router_to_mcpu", "from its router"}, {"mcpu_to_router", "to its router"}};
    i.stats = {kStatDmaReads, kStatDmaWrites, kStatResponses, kStatCommands, kStatAnswers};
    return i;
  }

 private:
  void on_memory(MemRequest& r) override {
    if (r.is_response) {
      // A DMA leg finished: answer the request it was made for.
      ++responses_.count;
      Ref<MemRequest> parent = std::move(r.parent);
      if (!parent) fail("a DMA response arrived without its request");
      parent->completion = r.completion;
      parent->t_serviced = r.t_serviced;
      reply(std::move(parent), 0);
      return;
    }
    Ref<MemRequest> leg = split(r);
    if (!prepare(*leg, "memory")) fail("received an unchecked request: " + leg->completion.error_message);
    ++(r.op == MemOp::kRead ? dma_reads_ : dma_writes_).count;
    leg->t_start = now();
    launch(std::move(leg), 0);
  }

  void on_command(Ref<HostCommand> cmd) override {
    ++commands_.count;
    std::string_view part = cmd->kind == HostCommand::Kind::kLaunch ? "pe_cpu" : "pe_mmu";
    std::vector<kbsim::NodeIndex> pes;
    for (const PeRef& pe : cmd->targets) {
      if (static_cast<int>(pe.sip) != where().sip || static_cast<int>(pe.cube) != where().cube)
        fail("received a command for " + names::pe(pe.sip, pe.cube, pe.pe) + ", which is not in its cube");
      pes.push_back(find_node(names::pe_part(pe.sip, pe.cube, pe.pe, part)));
    }
    if (pes.empty()) fail("received a command that names no target PE");
    if (cmd->kind == HostCommand::Kind::kLaunch && !cmd->has_start) {
      Tick barrier = 0;
      for (kbsim::NodeIndex pe : pes) barrier = std::max(barrier, control_latency(route_to(pe, memory_view())));
      cmd->has_start = true;
      cmd->target_start = now() + barrier;
    }
    expect_answers(*cmd, static_cast<unsigned>(pes.size()));
    for (std::size_t k = 0; k < pes.size(); ++k) send_leg(cmd->leg({cmd->targets[k]}), pes[k]);
  }

  kbsim::Stat &dma_reads_, &dma_writes_, &responses_, &commands_;
};

}  // namespace

KBSIM_PLUGIN("m_cpu") {
  kbsim::add_component<MCpu>(plugin);
  kbsim::add_message<kbsim::ahbm::HostCommand>(plugin);  // (the SDK's type: its legs may cross between processes)
}
