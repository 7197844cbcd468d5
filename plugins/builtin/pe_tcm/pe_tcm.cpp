// builtin.pe_tcm: the PE's tightly coupled memory (docs/model.md, "The PE").
// Read and write are independent channels of capacity 1: accesses in one
// direction serialize at that channel's bandwidth, the two directions overlap.
// Fabric requests to PE-local addresses are served here, and so are
// PE_FETCH_STORE's TCM requests (answered over the PE-internal link).
// It publishes how the TCM is split (kbsim/pe/tcm.hpp): `reserved_kib` at
// its bottom for the PE's kernels, the rest for host tensors.
#include <algorithm>

#include "kbsim/ahbm/memory_node.hpp"
#include "kbsim/pe/command.hpp"
#include "kbsim/pe/tcm.hpp"
#include "kbsim/plugin.hpp"

namespace {

using kbsim::ahbm::MemOp;
using kbsim::ahbm::MemRequest;
using kbsim::pe::TcmRequest;

constexpr kbsim::FloatParam kReadBwGbs{"read_bw_gbs", 512.0, "read channel bandwidth (0 = unlimited)"};
constexpr kbsim::FloatParam kWriteBwGbs{"write_bw_gbs", 512.0, "write channel bandwidth (0 = unlimited)"};
constexpr kbsim::IntParam kSizeKib{"size_kib", 2048, "TCM size (at most the PE_TCM sub-unit's 2 MiB address budget)"};
constexpr kbsim::IntParam kReservedKib{
    "reserved_kib", 1024,
    "scheduler-reserved TCM at its bottom, for kernels (pe_cpu's scratch_kib, tile buffers); the host allocates "
    "tensors only above it"};

class PeTcm final : public kbsim::ahbm::MemoryNode, public kbsim::pe::TcmLayout {
 public:
  explicit PeTcm(const kbsim::ComponentContext& ctx)
      : MemoryNode(ctx),
        read_bw_(params().get(kReadBwGbs)),
        write_bw_(params().get(kWriteBwGbs)),
        size_(static_cast<std::uint64_t>(params().get(kSizeKib)) * 1024),
        reserved_(static_cast<std::uint64_t>(params().get(kReservedKib)) * 1024),
        reads_(stat(kStatReads)),
        writes_(stat(kStatWrites)),
        read_busy_(stat(kStatReadBusyNs)),
        write_busy_(stat(kStatWriteBusyNs)) {
    params().check(read_bw_ >= 0, kReadBwGbs, "must be >= 0 (0 = unlimited)");
    params().check(write_bw_ >= 0, kWriteBwGbs, "must be >= 0 (0 = unlimited)");
    const auto budget = kbsim::ahbm::pe_sub_budget(static_cast<unsigned>(kbsim::ahbm::PeSub::kTcm));
    params().check(params().get(kSizeKib) > 0 && size_ <= budget, kSizeKib,
                   "must be > 0 and at most " + std::to_string(budget / 1024) + " (the PE_TCM address budget)");
    params().check(params().get(kReservedKib) >= 0 && reserved_ <= size_, kReservedKib,
                   "must be >= 0 and at most size_kib");
  }

  std::uint64_t tcm_bytes() const noexcept override { return size_; }
  std::uint64_t reserved_bytes() const noexcept override { return reserved_; }

  // Statistics, declared once: info() lists them, stat() binds them.
  static constexpr kbsim::StatDef kStatReads{"reads", kbsim::StatKind::kCounter, "requests",
                                             "read requests served (fabric and fetch)"};
  static constexpr kbsim::StatDef kStatWrites{"writes", kbsim::StatKind::kCounter, "requests",
                                              "write requests served (fabric and store)"};
  static constexpr kbsim::StatDef kStatReadBusyNs{"read_busy_ns", kbsim::StatKind::kValue, "ns",
                                                  "read channel busy time"};
  static constexpr kbsim::StatDef kStatWriteBusyNs{"write_busy_ns", kbsim::StatKind::kValue, "ns",
                                                   "write channel busy time"};

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "pe_tcm";
    i.summary = "PE tightly coupled memory: independent read and write channels of capacity 1";
    i.params = {kReadBwGbs, kWriteBwGbs, kSizeKib, kReservedKib};
    i.ports = {{"pe_data", "PE-internal data links: fabric requests via pe_dma"},
               {"pe_internal", "PE-internal control links: TCM requests from pe_fetch_store"}};
    i.stats = {kStatReads, kStatWrites, kStatReadBusyNs, kStatWriteBusyNs};
    return i;
  }

  void on_message(kbsim::PortIndex, kbsim::Ref<kbsim::Message> msg) override {
    if (msg->is<TcmRequest>()) {
      kbsim::Ref<TcmRequest> t(&msg->as<TcmRequest>());
      if (t->is_response) fail("received a TCM answer; the TCM only serves requests");
      kbsim::PortIndex out = out_port_to(t->from);
      if (out == kbsim::kNoPort)
        fail("no PE-internal link back to " + std::string(node_id(t->from)) + "; add it to cube.pe_template.links");
      kbsim::Tick done = serve(!t->write, t->nbytes);
      t->is_response = true;
      send(out, std::move(t), done - now());
      return;
    }
    kbsim::Ref<MemRequest> r = request(msg);
    if (r->is_response) fail("received a memory response; the TCM only serves requests");
    kbsim::Tick done = serve(r->op == MemOp::kRead, r->nbytes);
    r->t_serviced = done;
    reply(std::move(r), done - now());
  }

 private:
  /// Move `nbytes` on the read or write channel; returns when the channel is done.
  kbsim::Tick serve(bool read, std::uint64_t nbytes) {
    kbsim::Tick& free = read ? read_free_ : write_free_;
    kbsim::Tick busy = kbsim::serialization_ticks(nbytes, read ? read_bw_ : write_bw_);
    free = std::max(now(), free) + busy;
    ++(read ? reads_ : writes_).count;
    (read ? read_busy_ : write_busy_).value += kbsim::ticks_to_ns(busy);
    return free;
  }

  double read_bw_, write_bw_;
  std::uint64_t size_, reserved_;
  kbsim::Tick read_free_ = 0, write_free_ = 0;
  kbsim::Stat &reads_, &writes_, &read_busy_, &write_busy_;
};

}  // namespace

KBSIM_PLUGIN("pe_tcm") { kbsim::add_component<PeTcm>(plugin); }
