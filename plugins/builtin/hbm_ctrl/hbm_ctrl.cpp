// builtin.hbm_ctrl: one PE's HBM controller (docs/model.md,
// "Memory transactions"). N pseudo-channels (PCs), each with its own
// availability ledger; a burst goes to PC = (address >> log2(burst)) & (N - 1)
// and occupies it burst / pc_bw ns.
//
// Writes commit flit by flit as they arrive (each flit is one burst); the
// acknowledgement leaves when the last burst has committed, without holding
// up the next transaction. Reads schedule every burst at once and stream the
// data back, each flit leaving when its burst is done (cut-through): one
// timer per flit, or, where the core can carry them whole, one flit train
// (send_train) standing for those timers, cut back into them before anything
// else leaves on the link while flits of it are still to go.
#include <algorithm>
#include <vector>

#include "kbsim/ahbm/memory_node.hpp"
#include "kbsim/plugin.hpp"

namespace {

using kbsim::Tick;
using kbsim::ahbm::MemOp;
using kbsim::ahbm::MemRequest;

constexpr kbsim::FloatParam kOverheadNs{"overhead_ns", 0.0,
                                        "decode overhead, paid once per transaction on its first flit"};
constexpr kbsim::FloatParam kSwitchPenaltyNs{"switch_penalty_ns", 0.0,
                                             "extra time when a PC turns between read and write"};
constexpr kbsim::FloatParam kEfficiency{
    "efficiency", 1.0, "sustained fraction of peak; the topology compiler applies it to the router link"};
constexpr kbsim::IntParam kNumPcs{"num_pcs", 0, "pseudo-channels (0: cube.memory_map.hbm_channels_per_pe)"};
constexpr kbsim::FloatParam kPcBwGbs{"pc_bw_gbs", 0.0, "bandwidth per PC (0: cube.memory_map.hbm_channel_bw_gbs)"};
constexpr kbsim::IntParam kBurstBytes{"burst_bytes", 0,
                                      "burst size and PC striping unit (0: cube.memory_map.burst_bytes)"};

class HbmCtrl final : public kbsim::ahbm::MemoryNode {
 public:
  explicit HbmCtrl(const kbsim::ComponentContext& ctx)
      : MemoryNode(ctx),
        overhead_(overhead_param(kOverheadNs, false)),
        switch_penalty_(kbsim::ns_to_ticks(params().get(kSwitchPenaltyNs))),
        reads_(stat(kStatReads)),
        writes_(stat(kStatWrites)),
        bytes_(stat(kStatBytes)),
        bursts_(stat(kStatBursts)),
        pc_busy_(stat(kStatPcBusyNs)) {
    const auto& p = params();
    auto attrs = system_attrs();
    // Unset here: the system's memory map (an explicit topology publishes none: the attributes' defaults).
    namespace attrs_of = kbsim::ahbm::attrs;
    num_pcs_ = p.get(kNumPcs) ? p.get(kNumPcs) : kbsim::attr_or(attrs, attrs_of::kHbmChannelsPerPe);
    burst_ = p.get(kBurstBytes) ? p.get(kBurstBytes) : kbsim::attr_or(attrs, attrs_of::kBurstBytes);
    pc_bw_ = p.get(kPcBwGbs) > 0 ? p.get(kPcBwGbs) : kbsim::attr_or(attrs, attrs_of::kHbmChannelBwGbs);
    auto pow2 = [](std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
    p.check(pow2(num_pcs_), kNumPcs, "must be a power of two (got " + std::to_string(num_pcs_) + ")");
    p.check(pow2(burst_), kBurstBytes, "must be a power of two (got " + std::to_string(burst_) + ")");
    p.check(p.get(kSwitchPenaltyNs) >= 0, kSwitchPenaltyNs, "must be >= 0");
    p.check(p.get(kEfficiency) > 0 && p.get(kEfficiency) <= 1, kEfficiency, "must be in (0, 1]");
    while ((std::int64_t{1} << shift_) < burst_) ++shift_;
    pc_avail_.assign(static_cast<std::size_t>(num_pcs_), 0);
    pc_dir_.assign(static_cast<std::size_t>(num_pcs_), kNone);
  }

  // Statistics, declared once: info() lists them, stat() binds them.
  static constexpr kbsim::StatDef kStatReads{"reads", kbsim::StatKind::kCounter, "requests", "read requests served"};
  static constexpr kbsim::StatDef kStatWrites{"writes", kbsim::StatKind::kCounter, "requests", "write requests served"};
  static constexpr kbsim::StatDef kStatBytes{"bytes", kbsim::StatKind::kCounter, "bytes", "bytes read or written"};
  static constexpr kbsim::StatDef kStatBursts{"bursts", kbsim::StatKind::kCounter, "bursts", "bursts committed to PCs"};
  static constexpr kbsim::StatDef kStatPcBusyNs{"pc_busy_ns", kbsim::StatKind::kValue, "ns",
                                                "busy time summed over PCs"};

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "hbm_ctrl";
    i.summary =
        "per-PE HBM controller: address-striped pseudo-channels, per-flit write commit, reads streamed as the PCs read";
    i.params = {kOverheadNs, kSwitchPenaltyNs, kEfficiency, kNumPcs, kPcBwGbs, kBurstBytes};
    i.ports = {{"router_to_hbm", "from its PE's router: requests", kbsim::message_types<MemRequest>()},
               {"hbm_to_router", "to its PE's router: responses"}};
    i.stats = {kStatReads, kStatWrites, kStatBytes, kStatBursts, kStatPcBusyNs};
    i.flit_aware = true;
    return i;
  }

  void on_flit(kbsim::PortIndex, const kbsim::Flit& flit) override {
    if (!flit.msg->is<MemRequest>()) fail("received a message that is not a memory request");
    auto& r = flit.msg->as<MemRequest>();
    if (r.is_response || r.target != index()) fail("received a memory request addressed elsewhere");
    // One serial decoder: the overhead of a first flit delays what queues behind it.
    Tick start = std::max(now(), worker_free_) + (flit.first() ? overhead_ : 0);
    worker_free_ = start;
    if (r.op == MemOp::kRead) return serve_read(r, start);
    if (flit.first()) {
      writes_.count++;
      bytes_.count += r.nbytes;
      open_.push_back({&r, start, flit.count > 1 ? flit.bytes : 0});
    }
    auto it = std::find_if(open_.begin(), open_.end(), [&](const Open& o) { return o.msg == &r; });
    if (it == open_.end()) fail("a write flit arrived without its first flit");
    std::uint64_t addr = r.unit_offset + std::uint64_t{flit.index} * it->flit_bytes;
    it->last_finish = std::max(it->last_finish, commit(addr, flit.bytes, kWrite, start));
    if (flit.last()) {
      Tick done = it->last_finish;
      open_.erase(it);
      r.t_serviced = done;
      // Finalize asynchronously: the next transaction does not wait for this one's PCs.
      schedule(done - now(), kAck, kbsim::Ref<kbsim::Message>(&r));
    }
  }

  void on_timer(std::uint64_t tag, kbsim::Ref<kbsim::Message> msg) override {
    if (tag == kAck) return reply(request(msg), 0);  // (a control message: it takes no time on the link)
    let_go(now());
    // A read data flit whose burst is done: tag = flit index.
    auto& r = msg->as<MemRequest>();
    auto index = static_cast<std::uint32_t>(tag - kData);
    auto count = static_cast<std::uint32_t>((r.nbytes + burst_ - 1) / burst_);
    auto bytes = static_cast<std::uint32_t>(index + 1 < count ? burst_ : r.nbytes - std::uint64_t{index} * burst_);
    forward(r.route->ports.front(), kbsim::Flit{&r, index, count, bytes, 0}, now());
  }

 private:
  enum Dir : std::uint8_t { kNone, kRead, kWrite };
  static constexpr std::uint64_t kAck = 0, kData = 1;
  struct Open {
    MemRequest* msg;
    Tick last_finish;
    std::uint32_t flit_bytes;
  };

  /// Commit `bytes` at HBM offset `addr` no earlier than `at`; returns when the PC is done.
  Tick commit(std::uint64_t addr, std::uint64_t bytes, Dir dir, Tick at) {
    auto pc = static_cast<std::size_t>((addr >> shift_) & static_cast<std::uint64_t>(num_pcs_ - 1));
    Tick start = std::max(at, pc_avail_[pc]) + (pc_dir_[pc] != kNone && pc_dir_[pc] != dir ? switch_penalty_ : 0);
    Tick busy = kbsim::serialization_ticks(bytes, pc_bw_);
    pc_avail_[pc] = start + busy;
    pc_dir_[pc] = dir;
    ++bursts_.count;
    pc_busy_.value += kbsim::ticks_to_ns(busy);
    return start + busy;
  }

  void serve_read(MemRequest& r, Tick start) {
    reads_.count++;
    bytes_.count += r.nbytes;
    // The response travels back to the initiator; set it up before the data flits leave.
    kbsim::Ref<MemRequest> ref(&r);
    r.is_response = true;
    r.bytes = r.nbytes;
    r.route = &route_to(r.initiator, r.view);
    // A burst streams out as its PC reads it: its data leaves when the PC
    // starts it (in order), so a read is paced by the PCs' bandwidth and pays
    // no access latency beyond overhead_ns.
    auto count = (r.nbytes + burst_ - 1) / burst_;
    Tick leave = start;
    leaves_.clear();
    for (std::uint64_t i = 0; i < count; ++i) {
      std::uint64_t bytes = i + 1 < count ? burst_ : r.nbytes - i * burst_;
      Tick done = commit(r.unit_offset + i * burst_, bytes, kRead, start);
      leave = std::max(leave, done - kbsim::serialization_ticks(bytes, pc_bw_));
      if (i == 0) r.t_serviced = leave;
      leaves_.push_back(leave);
    }
    if (leaves_.empty()) return;
    // Trains still leaving when this one's first flit does would interleave with it: they go flit by flit from
    // here, and so does this one.
    // A read served in the same instant as the one before sets timers that tie with that one's (the same time
    // and order): they must come after its timers, so that one's go in first, and this one goes timer by timer.
    const bool again = served_ == now();
    served_ = now();
    const bool met = let_go(again ? now() : leaves_.front());
    if (!met && !again) {
      const kbsim::TrainId id =
          send_train(r.route->ports.front(), ref, leaves_, static_cast<std::uint32_t>(burst_), kData);
      if (id.valid()) return held_.push_back({id, leaves_.back()});
    }
    for (std::uint64_t i = 0; i < count; ++i) schedule(leaves_[i] - now(), kData + i, ref);
  }

  /// Stop holding the read trains whose last flit leaves at or after `t` (the newest first, as they were laid on
  /// the link), cutting them back into their timers; and those wholly gone. Whether any was cut.
  bool let_go(Tick t) {
    bool cut = false;
    while (!held_.empty() && held_.back().last >= t) {
      cut_train(held_.back().id);
      held_.pop_back();
      cut = true;
    }
    std::size_t gone = 0;
    while (gone < held_.size() && held_[gone].last < now()) done_train(held_[gone++].id);
    held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(gone));
    return cut;
  }

  Tick overhead_, switch_penalty_;
  std::int64_t num_pcs_ = 8, burst_ = 256;
  double pc_bw_ = 32.0;
  unsigned shift_ = 0;
  Tick worker_free_ = 0;
  std::vector<Tick> pc_avail_;
  std::vector<Dir> pc_dir_;
  std::vector<Open> open_;
  struct Held {
    kbsim::TrainId id;
    Tick last;  ///< when its last flit leaves
  };
  std::vector<Held> held_;       ///< read trains on the link, oldest first (each leaves wholly before the next)
  std::vector<Tick> leaves_;     ///< (serve_read's)
  Tick served_ = kbsim::kNever;  ///< when the last read was served
  kbsim::Stat &reads_, &writes_, &bytes_, &bursts_, &pc_busy_;
};

}  // namespace

KBSIM_PLUGIN("hbm_ctrl") {
  kbsim::add_component<HbmCtrl>(plugin);
  kbsim::add_message<kbsim::ahbm::MemRequest>(plugin);  // (the SDK's type: its requests may cross between processes)
}
