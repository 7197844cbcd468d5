// builtin.m_cpu: the cube's management CPU (ADR-0035). It pays its overhead
// once per message. Memory requests relayed by io_cpu go out through its DMA
// (M_CPU.DMA) to the serving node, and the response goes back to io_cpu when
// the transfer completes. The reference's DMA read and write resources of
// capacity 1 serialize only the zero-time dispatch step, not the transfer; here
// the outgoing link's FIFO does that, so the DMA keeps no state of its own.
#include "kbsim/ahbm/memory_node.hpp"
#include "kbsim/plugin.hpp"

namespace {

using kbsim::Ref;
using kbsim::Tick;
using kbsim::ahbm::MemOp;
using kbsim::ahbm::MemRequest;

class MCpu final : public kbsim::ahbm::MemoryNode {
 public:
  explicit MCpu(const kbsim::Context& ctx)
      : MemoryNode(ctx),
        overhead_(overhead_param(true)),
        dma_reads_(stat("dma_reads")),
        dma_writes_(stat("dma_writes")),
        responses_(stat("responses")) {}

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "m_cpu";
    i.summary = "cube management CPU: relays commands to its PEs and memory requests through its DMA";
    i.params = {kbsim::param_float("overhead_ns", 5.0, "processing overhead per message")};
    i.ports = {{"*", "its router (router_to_mcpu / mcpu_to_router)"}};
    i.stats = {{"dma_reads", kbsim::StatKind::kCounter, "transfers", "DMA reads dispatched"},
               {"dma_writes", kbsim::StatKind::kCounter, "transfers", "DMA writes dispatched"},
               {"responses", kbsim::StatKind::kCounter, "responses", "DMA completions relayed back"}};
    return i;
  }

  void on_message(kbsim::PortIndex, Ref<kbsim::Message> msg) override { schedule(overhead_, 0, request(msg)); }

  void on_timer(std::uint64_t, Ref<kbsim::Message> msg) override {
    auto& r = msg->as<MemRequest>();
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

 private:
  Tick overhead_;
  kbsim::Stat &dma_reads_, &dma_writes_, &responses_;
};

}  // namespace

KBSIM_PLUGIN("m_cpu") { kbsim::add_component<MCpu>(plugin); }
