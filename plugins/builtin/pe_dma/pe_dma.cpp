// builtin.pe_dma: the PE's DMA engine as a fabric initiator. It reads or
// writes any physical address over the NoC: same-cube targets route without
// UCIe ("local" view), others over the data path ("data" view). Read and
// write are separate channels of capacity 1, each held for the whole round
// trip (request out, data or acknowledgement back); requests wait in FIFO
// order for their channel.
#include <deque>

#include "kbsim/ahbm/memory_node.hpp"
#include "kbsim/plugin.hpp"

namespace {

using kbsim::Ref;
using kbsim::Tick;
using kbsim::ahbm::MemOp;
using kbsim::ahbm::MemRequest;

class PeDma final : public kbsim::ahbm::MemoryNode, public kbsim::ahbm::MemInitiator {
 public:
  explicit PeDma(const kbsim::Context& ctx)
      : MemoryNode(ctx),
        overhead_(overhead_param(false)),  // setup per transfer, not paid by traffic passing through
        reads_(stat("reads")),
        writes_(stat("writes")),
        bytes_(stat("bytes")),
        errors_(stat("errors")),
        read_busy_(stat("read_busy_ns")),
        write_busy_(stat("write_busy_ns")),
        forwarded_(stat("forwarded")) {}

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "pe_dma";
    i.summary = "PE DMA engine: reads and writes any physical address; read and write channels of capacity 1";
    i.params = {kbsim::param_float("overhead_ns", 0.0, "setup time per transfer, once it holds its channel")};
    i.ports = {{"*", "the PE's router (pe_to_router / router_to_pe) and PE-internal links"}};
    i.stats = {{"reads", kbsim::StatKind::kCounter, "transfers", "reads completed"},
               {"writes", kbsim::StatKind::kCounter, "transfers", "writes completed"},
               {"bytes", kbsim::StatKind::kCounter, "bytes", "bytes moved"},
               {"errors", kbsim::StatKind::kCounter, "transfers", "requests refused (bad address or length)"},
               {"read_busy_ns", kbsim::StatKind::kValue, "ns", "time the read channel was held"},
               {"write_busy_ns", kbsim::StatKind::kValue, "ns", "time the write channel was held"},
               {"forwarded", kbsim::StatKind::kCounter, "messages", "messages passed between the fabric and the TCM"}};
    return i;
  }

  void submit(Ref<MemRequest> r, kbsim::ahbm::MemClient* client) override {
    r->client = client;
    r->t_issue = now();
    if (!prepare(*r, "data")) {
      ++errors_.count;
      schedule(0, kRefused, std::move(r));  // complete from the event loop, not inside submit
      return;
    }
    Channel& ch = channel(r->op);
    ch.queue.push_back(std::move(r));
    if (!ch.busy) start(ch);
  }

  void on_timer(std::uint64_t tag, Ref<kbsim::Message> msg) override {
    if (tag == kRefused) complete(msg->as<MemRequest>());
  }

  void on_message(kbsim::PortIndex, Ref<kbsim::Message> msg) override {
    // Traffic between the fabric and this PE's TCM passes through (store and forward).
    if (kbsim::PortIndex out = msg->route ? msg->route->out_port_at(index()) : kbsim::kNoPort; out != kbsim::kNoPort) {
      ++forwarded_.count;
      send(out, std::move(msg));
      return;
    }
    MemRequest& r = *request(msg);
    if (!r.is_response || r.initiator != index()) fail("received a memory request; it only initiates them");
    Channel& ch = channel(r.op);
    if (ch.queue.empty() || ch.queue.front().get() != &r) fail("a response arrived for a transfer it did not start");
    Ref<MemRequest> done = std::move(ch.queue.front());
    ch.queue.pop_front();
    ch.busy = false;
    ++(r.op == MemOp::kRead ? reads_ : writes_).count;
    bytes_.count += r.nbytes;
    (r.op == MemOp::kRead ? read_busy_ : write_busy_).value += kbsim::ticks_to_ns(now() - r.t_start);
    if (!ch.queue.empty()) start(ch);
    complete(*done);
  }

 private:
  static constexpr std::uint64_t kRefused = 1;
  struct Channel {
    std::deque<Ref<MemRequest>> queue;  ///< front = in flight when busy
    bool busy = false;
  };
  Channel& channel(MemOp op) { return op == MemOp::kRead ? read_ : write_; }

  void start(Channel& ch) {
    ch.busy = true;
    Ref<MemRequest> r = ch.queue.front();
    r->t_start = now();
    launch(std::move(r), overhead_);
  }

  Tick overhead_;
  Channel read_, write_;
  kbsim::Stat &reads_, &writes_, &bytes_, &errors_, &read_busy_, &write_busy_, &forwarded_;
};

}  // namespace

KBSIM_PLUGIN("pe_dma") { kbsim::add_component<PeDma>(plugin); }
