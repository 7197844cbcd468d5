// builtin.pe_ipcq: the PE's inter-PE queues (docs/model.md, "IPCQ").
//
// A CCL algorithm's wiring installs a queue pair per direction (IpcqPort). A
// kernel's tl.send comes in as an IpcqCall: when the peer's ring has a free
// slot (head - cached peer tail < n_slots) the send leaves at once as one
// IpcqPacket through this PE's DMA and the call returns (fire and forget);
// otherwise it waits for a credit, woken by the credit itself ("sleep") or by
// re-reading its cached pointers every poll interval ("poll"). An arriving
// packet (its slot already written by the receiving DMA, which paid
// slot_write) is matched to its queue by address; a tl.recv waits for one,
// pays the slot read when it consumes, advances the tail, sends a credit and
// returns once the credit's path latency has passed.
#include <string_view>
#include <unordered_map>
#include <utility>

#include "kbsim/ahbm/names.hpp"
#include "kbsim/fifo.hpp"
#include "kbsim/pe/ipcq.hpp"
#include "kbsim/plugin.hpp"
#include "kbsim/waiting.hpp"

namespace {

namespace pe = kbsim::pe;
using kbsim::Ref;
using kbsim::Tick;
using pe::IpcqCall;

constexpr kbsim::FloatParam kTcmBwGbs{"tcm_bw_gbs", 512.0, "slot write/read bandwidth with TCM slots"};
constexpr kbsim::FloatParam kTcmLatencyNs{"tcm_latency_ns", 0.0, "slot access setup with TCM slots"};
constexpr kbsim::FloatParam kSramBwGbs{"sram_bw_gbs", 512.0, "slot write/read bandwidth with cube-SRAM slots"};
constexpr kbsim::FloatParam kSramLatencyNs{"sram_latency_ns", 2.0, "slot access setup with cube-SRAM slots"};
constexpr kbsim::FloatParam kSramHopBwGbs{"sram_hop_bw_gbs", 128.0,
                                          "PE-to-SRAM-bank hop paid on top (the SRAM's router link)"};
constexpr kbsim::FloatParam kHbmBwGbs{"hbm_bw_gbs", 256.0, "slot write/read bandwidth with PE-local HBM slots"};
constexpr kbsim::FloatParam kHbmLatencyNs{"hbm_latency_ns", 6.0, "slot access setup with HBM slots"};
constexpr kbsim::FloatParam kHbmHopBwGbs{"hbm_hop_bw_gbs", 256.0,
                                         "PE-to-HBM-bank hop paid on top (the HBM's router link)"};
constexpr kbsim::FloatParam kPollIntervalNs{
    "poll_interval_ns", 1.0, "backpressure 'poll': how often a blocked send re-reads its cached pointers"};
constexpr kbsim::NodeParam kDma{"dma", "pe_dma", "its PE's DMA engine, which carries sends and credits"};

class PeIpcq final : public kbsim::Component, public pe::IpcqPort, public kbsim::Waiting {
 public:
  explicit PeIpcq(const kbsim::ComponentContext& ctx)
      : Component(ctx),
        poll_(kbsim::ns_to_ticks(params().get(kPollIntervalNs))),
        sent_(stat(kStatSent)),
        received_(stat(kStatReceived)),
        credits_(stat(kStatCredits)),
        stalls_(stat(kStatStalls)),
        bytes_sent_(stat(kStatBytesSent)) {
    for (const kbsim::FloatParam* p : {&kTcmBwGbs, &kSramBwGbs, &kSramHopBwGbs, &kHbmBwGbs, &kHbmHopBwGbs})
      params().check(params().get(*p) > 0, *p, "must be > 0");
    for (const kbsim::FloatParam* p : {&kTcmLatencyNs, &kSramLatencyNs, &kHbmLatencyNs})
      params().check(params().get(*p) >= 0, *p, "must be >= 0");
    params().check(params().get(kPollIntervalNs) > 0, kPollIntervalNs, "must be > 0");
  }

  static constexpr kbsim::StatDef kStatSent{"sent", kbsim::StatKind::kCounter, "messages", "sends put on the fabric"};
  static constexpr kbsim::StatDef kStatBytesSent{"bytes_sent", kbsim::StatKind::kCounter, "bytes",
                                                 "payload bytes of the sends"};
  static constexpr kbsim::StatDef kStatReceived{"received", kbsim::StatKind::kCounter, "messages",
                                                "messages taken by a recv"};
  static constexpr kbsim::StatDef kStatCredits{"credits", kbsim::StatKind::kCounter, "credits", "credits returned"};
  static constexpr kbsim::StatDef kStatStalls{"stalls", kbsim::StatKind::kCounter, "sends",
                                              "sends that waited for a credit (backpressure)"};

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "pe_ipcq";
    i.summary = "PE inter-PE queues: rx/tx rings per installed direction, sends as single DMA writes, credits back";
    i.params = {kTcmBwGbs, kTcmLatencyNs, kSramBwGbs,   kSramLatencyNs,  kSramHopBwGbs,
                kHbmBwGbs, kHbmLatencyNs, kHbmHopBwGbs, kPollIntervalNs, kDma};
    i.ports = {{"pe_internal", "from and to the PE CPU (calls) and the PE DMA (packets and credits)",
                kbsim::message_types<IpcqCall, pe::IpcqPacket, pe::IpcqCredit>()}};
    i.stats = {kStatSent, kStatBytesSent, kStatReceived, kStatCredits, kStatStalls};
    return i;
  }

  void setup() override {
    const auto pe = kbsim::ahbm::pe_of(id());
    if (!pe) fail("a pe_ipcq must be part of a PE (sip{S}.cube{C}.pe{P}.pe_ipcq)");
    self_ = *pe;
    dma_ = params().get(kDma);
    if (dma_ == kbsim::kNoNode) fail("needs its PE's DMA engine (parameter 'dma')");
    to_dma_ = out_port_to(dma_);
    if (to_dma_ == kbsim::kNoPort) fail("has no pe_internal link to " + std::string(node_id(dma_)));
  }

  // --- IpcqPort ---

  void install(const pe::IpcqConfig& cfg, std::vector<pe::IpcqQueue> queues) override {
    for (const Queue& q : queues_)
      if (!q.arrived.empty() || !q.recvs.empty() || !q.sends.empty() || q.head != q.peer_tail)
        fail("cannot be re-installed while messages are in flight on direction " + q.spec.dir);
    cfg_ = cfg;
    // What a slot costs, read from the parameters once (slot_access runs per message).
    auto bw = [&](const kbsim::FloatParam& p) { return params().get(p); };
    auto lat = [&](const kbsim::FloatParam& p) { return kbsim::ns_to_ticks(params().get(p)); };
    switch (cfg_.buffer_kind) {
      case pe::BufferKind::kTcm: slot_cost_ = {bw(kTcmBwGbs), 0.0, lat(kTcmLatencyNs)}; break;
      case pe::BufferKind::kSram: slot_cost_ = {bw(kSramBwGbs), bw(kSramHopBwGbs), lat(kSramLatencyNs)}; break;
      case pe::BufferKind::kHbm: slot_cost_ = {bw(kHbmBwGbs), bw(kHbmHopBwGbs), lat(kHbmLatencyNs)}; break;
    }
    queues_.clear();
    by_peer_ring_.clear();
    for (pe::IpcqQueue& s : queues) {
      Queue q;
      const std::string peer = kbsim::ahbm::names::pe_part(s.peer.sip, s.peer.cube, s.peer.pe, "pe_dma");
      q.peer_dma = lookup_node(peer);
      if (q.peer_dma == kbsim::kNoNode)
        fail("direction " + s.dir + ": the peer's DMA " + peer + " is not in this topology");
      q.view = find_view(s.peer.sip == self_.sip && s.peer.cube == self_.cube ? "local" : "data");
      q.spec = std::move(s);
      by_peer_ring_.emplace(q.spec.peer_rx_base, queues_.size());
      queues_.push_back(std::move(q));
    }
  }
  const pe::IpcqQueue* queue(std::string_view dir) const override {
    const Queue* q = find(dir);
    return q ? &q->spec : nullptr;
  }
  Tick slot_write(std::uint64_t nbytes) const override { return slot_access(nbytes); }

  /// What a stuck run should know: sends waiting for credits, messages nobody took.
  std::string waiting_for() const override {
    std::string out;
    auto peer = [](const Queue& q) {
      return kbsim::ahbm::names::pe(q.spec.peer.sip, q.spec.peer.cube, q.spec.peer.pe);
    };
    for (const Queue& q : queues_) {
      if (!q.sends.empty())
        out += (out.empty() ? "" : "; ") + std::string(id()) + ": " + std::to_string(q.sends.size()) + " send(s) in " +
               q.spec.dir + " wait for a credit from " + peer(q) + " (" + std::to_string(q.head - q.peer_tail) +
               " of " + std::to_string(cfg_.n_slots) + " slots in flight)";
      if (!q.arrived.empty())
        out += (out.empty() ? "" : "; ") + std::string(id()) + ": holds " + std::to_string(q.arrived.size()) +
               " message(s) from " + peer(q) + " in " + q.spec.dir + " that no recv took";
    }
    return out;
  }

  // --- messages ---

  void on_message(kbsim::PortIndex, Ref<kbsim::Message> msg) override {
    if (msg->is<IpcqCall>()) return call(Ref<IpcqCall>(&msg->as<IpcqCall>()));
    if (msg->is<pe::IpcqPacket>()) return arrived(msg->as<pe::IpcqPacket>());
    credit(msg->as<pe::IpcqCredit>());
  }

  void on_timer(std::uint64_t tag, Ref<kbsim::Message> msg) override {
    const auto q = static_cast<std::size_t>(tag >> 8);
    switch (static_cast<Tag>(tag & 0xff)) {
      case kPoll: queues_[q].polling = false; return try_send(queues_[q]);
      case kSlotRead: return consumed(queues_[q], Ref<IpcqCall>(&msg->as<IpcqCall>()));
      case kReply: return reply(Ref<IpcqCall>(&msg->as<IpcqCall>()));
    }
  }

 private:
  enum Tag : std::uint64_t { kPoll, kSlotRead, kReply };
  struct Arrival {
    std::uint64_t addr, nbytes;
    kbsim::BytesPtr value;
  };
  struct Queue {
    pe::IpcqQueue spec;
    kbsim::NodeIndex peer_dma = kbsim::kNoNode;
    kbsim::ViewId view = 0;
    Tick credit_latency = kbsim::kNever;  ///< a credit's way back to the peer (found on first use)
    std::uint64_t head = 0;               ///< sends issued
    std::uint64_t tail = 0;               ///< messages consumed from this PE's rx ring
    std::uint64_t peer_tail = 0;          ///< cached: the peer's consumption of this PE's sends (from credits)
    std::uint64_t peer_head = 0;          ///< cached: the peer's sends seen arriving
    kbsim::Fifo<Arrival> arrived;
    kbsim::Fifo<Ref<IpcqCall>> recvs, sends;  ///< waiting calls, FIFO
    bool polling = false;
  };

  std::uint64_t tag(const Queue& q, Tag t) const { return static_cast<std::uint64_t>(&q - queues_.data()) << 8 | t; }

  /// A slot of the configured buffer kind: its bandwidth, the hop's to it (0: none, a PE's own TCM) and latency.
  struct SlotCost {
    double bw_gbs = 0.0, hop_bw_gbs = 0.0;
    Tick latency = 0;
  };

  Tick slot_access(std::uint64_t n) const {
    const SlotCost& c = slot_cost_;
    return kbsim::serialization_ticks(n, c.bw_gbs) + c.latency + kbsim::serialization_ticks(n, c.hop_bw_gbs);
  }

  /// The queue of direction `dir` (a PE has a few: a scan beats a hash of the name).
  const Queue* find(std::string_view dir) const {
    for (const Queue& q : queues_)
      if (q.spec.dir == dir) return &q;
    return nullptr;
  }
  Queue* find(std::string_view dir) { return const_cast<Queue*>(std::as_const(*this).find(dir)); }

  void call(Ref<IpcqCall> c) {
    Queue* q = find(c->dir);
    if (!q) {
      std::string have;
      for (const Queue& k : queues_) have += (have.empty() ? "" : ", ") + k.spec.dir;
      std::string why = "direction " + c->dir + " is not installed on this PE (installed: " +
                        (have.empty() ? "none; was init_process_group called?" : have) + ")";
      return refuse(std::move(c), std::move(why));  // (the text first: c is moved into the call)
    }
    if (c->kind == IpcqCall::Kind::kSend) {
      if (c->nbytes > cfg_.slot_size) {
        std::string why = "sends " + std::to_string(c->nbytes) + " bytes; a slot holds " +
                          std::to_string(cfg_.slot_size) + " (ccl.yaml slot_size)";
        return refuse(std::move(c), std::move(why));
      }
      q->sends.push_back(std::move(c));
      return try_send(*q);
    }
    q->recvs.push_back(std::move(c));
    try_recv(*q);
  }

  void refuse(Ref<IpcqCall> c, std::string error) {
    c->ok = false;
    c->error = std::move(error);
    reply(std::move(c));
  }

  void try_send(Queue& q) {
    while (!q.sends.empty() && q.head - q.peer_tail < cfg_.n_slots) {
      Ref<IpcqCall> c = std::move(q.sends.front());
      q.sends.pop_front();
      Ref<pe::IpcqPacket> p = kbsim::make_message<pe::IpcqPacket>();
      p->src_dma = dma_;
      p->dst_dma = q.peer_dma;
      p->view = q.view;
      p->dst_addr = q.spec.peer_rx_base + (q.head % cfg_.n_slots) * cfg_.slot_size;
      p->sender_seq = q.head++;
      p->src_dir = q.spec.dir;
      p->nbytes = c->nbytes;
      p->source = c->source;
      p->slot_space = pe::buffer_space(cfg_.buffer_kind);
      p->bytes = 0;  // the DMA sets the wire size when it routes it
      ++sent_.count;
      bytes_sent_.count += c->nbytes;
      send(to_dma_, std::move(p));
      reply(std::move(c));
    }
    if (q.sends.empty()) return;
    ++stalls_.count;
    if (cfg_.backpressure == pe::Backpressure::kPoll && !q.polling) {
      q.polling = true;
      schedule(poll_, tag(q, kPoll));
    }
  }

  void arrived(pe::IpcqPacket& p) {
    // The rx rings lie in address order, one span each: the address says which.
    Queue* q = nullptr;
    const std::uint64_t span = cfg_.bytes_per_direction();
    if (!queues_.empty() && p.dst_addr >= queues_.front().spec.rx_base) {
      const std::uint64_t k = (p.dst_addr - queues_.front().spec.rx_base) / span;
      if (k < queues_.size() && p.dst_addr - queues_[k].spec.rx_base < span) q = &queues_[k];
    }
    if (!q)
      fail("a message from " + std::string(node_id(p.src_dma)) + " (its direction " + p.src_dir + ") for address " +
           kbsim::ahbm::hex(p.dst_addr) + " matches no installed rx ring of this PE");
    q->peer_head = std::max(q->peer_head, p.sender_seq + 1);
    q->arrived.push_back({p.dst_addr, p.nbytes, p.source.value});
    try_recv(*q);
  }

  void try_recv(Queue& q) {
    while (!q.recvs.empty() && !q.arrived.empty()) {
      Ref<IpcqCall> c = std::move(q.recvs.front());
      q.recvs.pop_front();
      Arrival a = q.arrived.front();
      q.arrived.pop_front();
      c->slot_addr = a.addr;
      c->slot_space = pe::buffer_space(cfg_.buffer_kind);
      c->value = std::move(a.value);
      c->message_bytes = a.nbytes;
      ++received_.count;
      if (c->kind == IpcqCall::Kind::kRecvNoConsume) {
        c->t_read = now();
        credit_back(q);  // arrival only: no slot read and no wait for the credit, but the slot is freed
        reply(std::move(c));
        continue;
      }
      schedule(slot_access(a.nbytes), tag(q, kSlotRead), std::move(c));
    }
  }

  /// The slot is read: free it, credit the sender, and return once the credit has travelled.
  void consumed(Queue& q, Ref<IpcqCall> c) {
    c->t_read = now();
    credit_back(q);
    if (q.credit_latency == kbsim::kNever) q.credit_latency = control_latency(route_between(dma_, q.peer_dma, q.view));
    schedule(q.credit_latency, kReply, std::move(c));
  }

  /// Free the oldest slot of `q`'s rx ring: advance the tail and tell the sender.
  void credit_back(Queue& q) {
    ++q.tail;
    Ref<pe::IpcqCredit> cr = kbsim::make_message<pe::IpcqCredit>();
    cr->src_dma = dma_;
    cr->dst_dma = q.peer_dma;
    cr->view = q.view;
    cr->consumer_seq = q.tail;
    cr->dst_rx_base = q.spec.rx_base;
    cr->bytes = cfg_.credit_bytes;
    ++credits_.count;
    send(to_dma_, std::move(cr));
  }

  void credit(const pe::IpcqCredit& cr) {
    if (auto it = by_peer_ring_.find(cr.dst_rx_base); it != by_peer_ring_.end()) {
      Queue& q = queues_[it->second];
      q.peer_tail = std::max(q.peer_tail, cr.consumer_seq);
      if (cfg_.backpressure == pe::Backpressure::kSleep) try_send(q);
      return;
    }
    fail("a credit from " + std::string(node_id(cr.src_dma)) + " for rx ring " + kbsim::ahbm::hex(cr.dst_rx_base) +
         " matches no installed queue of this PE");
  }

  void reply(Ref<IpcqCall> c) {
    c->done = true;
    const kbsim::PortIndex out = out_port_to(c->reply_to);
    if (out == kbsim::kNoPort) fail("has no pe_internal link back to " + std::string(node_id(c->reply_to)));
    send(out, std::move(c));
  }

  Tick poll_;
  pe::IpcqConfig cfg_;
  SlotCost slot_cost_;
  kbsim::ahbm::PeRef self_;
  kbsim::NodeIndex dma_ = kbsim::kNoNode;
  kbsim::PortIndex to_dma_ = kbsim::kNoPort;
  std::vector<Queue> queues_;                                    ///< in rx address order
  std::unordered_map<std::uint64_t, std::size_t> by_peer_ring_;  ///< the peer's rx ring -> queue (credits)
  kbsim::Stat &sent_, &received_, &credits_, &stalls_, &bytes_sent_;
};

}  // namespace

KBSIM_PLUGIN("pe_ipcq") {
  kbsim::add_component<PeIpcq>(plugin);
  kbsim::add_message<kbsim::pe::IpcqPacket>(plugin);  // (the SDK's types: they may cross between processes)
  kbsim::add_message<kbsim::pe::IpcqCredit>(plugin);
}
