// builtin.pe_dma: the PE's DMA engine as a fabric initiator. It reads or
// writes any physical address over the NoC: same-cube targets route without
// UCIe ("local" view), others over the data path ("data" view). Read and
// write are separate channels of capacity 1, each held for the whole round
// trip (request out, data or acknowledgement back); requests wait in FIFO
// order for their channel.
//
// It is also the DMA_READ / DMA_WRITE stage engine of its PE's pipeline
// (docs/model.md, "The PE"): a stage's virtual address goes through the PE's
// pe_mmu (an unmapped address, or no pe_mmu, is used as physical, see
// "The MMU"; the TLB overhead is paid once per stage while holding the
// channel), and the transfer queues on the same channel as any other request. A
// stage that follows this engine's own previous stage of the same tile (e.g.
// DMA_READ(B) right after DMA_READ(A)) goes to the front of its queue, behind
// only the transfer in flight.
//
// It carries its PE's IPCQ traffic (docs/model.md, "IPCQ"): a packet or credit
// from its PE_IPCQ goes out on the fabric towards the peer's DMA; one that
// arrives for it goes to its PE_IPCQ, a packet after this engine has written
// its rx slot (the slot tier's time, asked of the PE_IPCQ).

#include "kbsim/ahbm/host_command.hpp"
#include "kbsim/ahbm/memory_node.hpp"
#include "kbsim/fifo.hpp"
#include "kbsim/pe/command.hpp"
#include "kbsim/pe/ipcq.hpp"
#include "kbsim/plugin.hpp"

namespace {

using kbsim::Ref;
using kbsim::Tick;
using kbsim::ahbm::MemOp;
using kbsim::ahbm::MemRequest;
using kbsim::pe::StageType;
using kbsim::pe::TileToken;

constexpr kbsim::FloatParam kOverheadNs{"overhead_ns", 0.0, "setup time per transfer, once it holds its channel"};
constexpr kbsim::BoolParam kStageReadRequestChannel{
    "stage_read_request_channel", true,
    "a DMA_READ stage's request crosses routers on the request channel, without their "
    "overhead (a tile read costs its data leg, as in the reference's pipeline); "
    "false: it pays every overhead, as data does"};
constexpr kbsim::NodeParam kMmu{"mmu", "pe_mmu",
                                "its PE's MMU (in the PE template, a component name means that sibling); "
                                "empty: addresses are physical"};
constexpr kbsim::NodeParam kIpcq{"ipcq", "pe_ipcq", "its PE's inter-PE queues, whose traffic it carries; empty: none"};

class PeDma final : public kbsim::pe::StageEngineOf<kbsim::ahbm::MemoryNode>, public kbsim::ahbm::MemInitiator {
 public:
  explicit PeDma(const kbsim::ComponentContext& ctx)
      : StageEngineOf(ctx),
        overhead_(overhead_param(kOverheadNs, false)),  // setup per transfer, not paid by traffic passing through
        request_channel_(params().get(kStageReadRequestChannel)),
        reads_(stat(kStatReads)),
        writes_(stat(kStatWrites)),
        bytes_(stat(kStatBytes)),
        errors_(stat(kStatErrors)),
        read_busy_(stat(kStatReadBusyNs)),
        write_busy_(stat(kStatWriteBusyNs)),
        forwarded_(stat(kStatForwarded)),
        stages_(stat(kStatStages)) {}

  // Statistics, declared once: info() lists them, stat() binds them.
  static constexpr kbsim::StatDef kStatReads{"reads", kbsim::StatKind::kCounter, "transfers", "reads completed"};
  static constexpr kbsim::StatDef kStatWrites{"writes", kbsim::StatKind::kCounter, "transfers", "writes completed"};
  static constexpr kbsim::StatDef kStatBytes{"bytes", kbsim::StatKind::kCounter, "bytes", "bytes moved"};
  static constexpr kbsim::StatDef kStatErrors{"errors", kbsim::StatKind::kCounter, "transfers",
                                              "requests refused (bad address or length)"};
  static constexpr kbsim::StatDef kStatReadBusyNs{"read_busy_ns", kbsim::StatKind::kValue, "ns",
                                                  "time the read channel was held"};
  static constexpr kbsim::StatDef kStatWriteBusyNs{"write_busy_ns", kbsim::StatKind::kValue, "ns",
                                                   "time the write channel was held"};
  static constexpr kbsim::StatDef kStatForwarded{"forwarded", kbsim::StatKind::kCounter, "messages",
                                                 "messages passed between the fabric and the TCM"};
  static constexpr kbsim::StatDef kStatStages{"stages", kbsim::StatKind::kCounter, "stages",
                                              "DMA_READ / DMA_WRITE tile stages completed"};

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "pe_dma";
    i.summary =
        "PE DMA engine: reads and writes any physical address, and runs the PE's DMA_READ / DMA_WRITE tile stages; "
        "read and write channels of capacity 1";
    i.params = {kOverheadNs, kStageReadRequestChannel, kMmu, kIpcq};
    i.ports = {{"pe_to_router", "to its PE's router: requests out, answers back"},
               {"router_to_pe", "from its PE's router"},
               {"pe_internal", "PE-internal control links: tile tokens from and to the other engines"},
               {"pe_data", "PE-internal data links: to and from the TCM"}};
    i.stats = {kStatReads,      kStatWrites,      kStatBytes,     kStatErrors,
               kStatReadBusyNs, kStatWriteBusyNs, kStatForwarded, kStatStages};
    return i;
  }

  void setup() override {
    // No MMU (or no translator there): stage addresses are physical.
    const kbsim::NodeIndex mmu = params().get(kMmu);
    mmu_ = mmu == kbsim::kNoNode ? nullptr : kbsim::ahbm::as_translator(peer(mmu));
    if (const kbsim::NodeIndex q = params().get(kIpcq); q != kbsim::kNoNode) {
      ipcq_ = kbsim::pe::as_ipcq(peer(q));
      to_ipcq_ = out_port_to(q);
      if (!ipcq_ || to_ipcq_ == kbsim::kNoPort)
        fail("its 'ipcq' parameter names " + std::string(node_id(q)) +
             ", which is not a PE_IPCQ reached by a pe_internal link");
    }
  }

  void submit(Ref<MemRequest> r, kbsim::ahbm::MemClient* client) override {
    r->client = client;
    r->t_issue = now();
    if (!prepare(*r, "data")) {
      ++errors_.count;
      schedule(0, kRefused, std::move(r));  // complete from the event loop, not inside submit
      return;
    }
    enqueue({std::move(r), {}, 0}, false);
  }

  void on_timer(std::uint64_t tag, Ref<kbsim::Message> msg) override {
    if (tag == kRefused) complete(msg->as<MemRequest>());
  }

 private:
  static constexpr std::uint64_t kRefused = 1;
  struct Job {
    Ref<MemRequest> req;
    Ref<TileToken> token;  ///< set for a tile stage
    Tick tlb = 0;          ///< translation overhead of a tile stage
  };
  struct Channel {
    kbsim::Fifo<Job> queue;  ///< front = in flight when busy
    bool busy = false;
  };
  Channel& channel(MemOp op) { return op == MemOp::kRead ? read_ : write_; }

  void accept(Ref<TileToken> t, bool chained) override {
    const kbsim::pe::Stage& s = t->current();
    if (s.type != StageType::kDmaRead && s.type != StageType::kDmaWrite)
      fail("received a " + std::string(kbsim::pe::stage_name(s.type)) +
           " stage; it runs dma_read and dma_write stages");
    Ref<MemRequest> r = kbsim::make_message<MemRequest>();
    r->op = s.type == StageType::kDmaRead ? MemOp::kRead : MemOp::kWrite;
    r->pa = s.addr;
    r->nbytes = s.nbytes;
    r->request_channel = request_channel_ && r->op == MemOp::kRead;
    r->t_issue = now();
    Tick tlb = mmu_ ? mmu_->overhead() : 0;
    bool mapped = !mmu_ || translate(*r);
    if (!mapped || !prepare(*r, "data")) {
      ++errors_.count;
      return abort_tile(std::move(t), describe(*r) + ": " +
                                          (mapped ? r->completion.error_message
                                                  : "the virtual range is not mapped to contiguous physical memory"));
    }
    enqueue({std::move(r), std::move(t), tlb}, chained);
  }

  void on_other(kbsim::PortIndex, Ref<kbsim::Message> msg) override {
    if (msg->is<kbsim::pe::IpcqPacket>() || msg->is<kbsim::pe::IpcqCredit>()) return ipcq(std::move(msg));
    // Traffic between the fabric and this PE's TCM passes through (store and forward).
    if (kbsim::PortIndex out = msg->route ? msg->route->out_port_at(index()) : kbsim::kNoPort; out != kbsim::kNoPort) {
      ++forwarded_.count;
      send(out, std::move(msg));
      return;
    }
    MemRequest& r = *request(msg);
    if (!r.is_response || r.initiator != index()) fail("received a memory request; it only initiates them");
    Channel& ch = channel(r.op);
    if (ch.queue.empty() || ch.queue.front().req.get() != &r)
      fail("a response arrived for a transfer it did not start");
    Job done = std::move(ch.queue.front());
    ch.queue.pop_front();
    ch.busy = false;
    ++(r.op == MemOp::kRead ? reads_ : writes_).count;
    bytes_.count += r.nbytes;
    (r.op == MemOp::kRead ? read_busy_ : write_busy_).value += kbsim::ticks_to_ns(now() - r.t_start);
    // Finish first: a chained next stage of the same tile takes the channel before the queue.
    if (done.token)
      finish_tile(std::move(done.token), r);
    else
      complete(r);
    if (!ch.busy && !ch.queue.empty()) start(ch);
  }

  /// IPCQ traffic: out to the peer's DMA, or in to this PE's queues.
  void ipcq(Ref<kbsim::Message> msg) {
    const bool packet = msg->is<kbsim::pe::IpcqPacket>();
    if (!msg->route) {  // from this PE's queues
      kbsim::NodeIndex dst =
          packet ? msg->as<kbsim::pe::IpcqPacket>().dst_dma : msg->as<kbsim::pe::IpcqCredit>().dst_dma;
      kbsim::ViewId view = packet ? msg->as<kbsim::pe::IpcqPacket>().view : msg->as<kbsim::pe::IpcqCredit>().view;
      const kbsim::Route& r = route_to(dst, view);
      msg->route = &r;
      if (packet) msg->bytes = msg->as<kbsim::pe::IpcqPacket>().nbytes;
      return send(r.ports.front(), std::move(msg));
    }
    if (kbsim::PortIndex out = msg->route->out_port_at(index()); out != kbsim::kNoPort) {
      ++forwarded_.count;
      return send(out, std::move(msg));
    }
    if (!ipcq_) fail("received IPCQ traffic but its PE has no PE_IPCQ (parameter 'ipcq')");
    const Tick write = packet ? ipcq_->slot_write(msg->as<kbsim::pe::IpcqPacket>().nbytes) : 0;
    msg->route = nullptr;
    send(to_ipcq_, std::move(msg), write);
  }

  /// Queue a transfer on its channel (at the front, behind the one in flight, when `first`).
  void enqueue(Job job, bool first) {
    Channel& ch = channel(job.req->op);
    ch.queue.insert(first ? (ch.busy ? 1 : 0) : ch.queue.size(), std::move(job));
    if (!ch.busy) start(ch);
  }

  void start(Channel& ch) {
    ch.busy = true;
    Job& job = ch.queue.front();
    job.req->t_start = now();
    launch(job.req, overhead_ + job.tlb);
  }

  void finish_tile(Ref<TileToken> t, const MemRequest& r) {
    if (!r.completion.ok) return abort_tile(std::move(t), describe(r) + ": " + r.completion.error_message);
    if (!t->current().composite) t->pipe->command->pa = r.pa;
    ++stages_.count;
    finish_stage(std::move(t), r.t_start);
  }

  /// Turn `r.pa` from a virtual into a physical address; false when a mapped
  /// range does not continue contiguously in physical memory.
  bool translate(MemRequest& r) const {
    auto pa = kbsim::ahbm::physical_range(*mmu_, r.pa, r.nbytes);
    if (pa) r.pa = *pa;
    return pa.has_value();
  }

  static std::string describe(const MemRequest& r) {
    return std::string(r.op == MemOp::kRead ? "read" : "write") + " of " + std::to_string(r.nbytes) + " bytes at " +
           kbsim::ahbm::hex(r.pa);
  }

  Tick overhead_;
  bool request_channel_;
  const kbsim::ahbm::Translator* mmu_ = nullptr;
  kbsim::pe::IpcqPort* ipcq_ = nullptr;
  kbsim::PortIndex to_ipcq_ = kbsim::kNoPort;
  Channel read_, write_;
  kbsim::Stat &reads_, &writes_, &bytes_, &errors_, &read_busy_, &write_busy_, &forwarded_, &stages_;
};

}  // namespace

KBSIM_PLUGIN("pe_dma") { kbsim::add_component<PeDma>(plugin); }
