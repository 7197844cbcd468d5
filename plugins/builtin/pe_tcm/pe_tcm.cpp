// builtin.pe_tcm: the PE's tightly coupled memory (docs/model.md, "The PE").
// Read and write are independent channels of capacity 1: accesses in one
// direction serialize at that channel's bandwidth, the two directions overlap.
// Fabric requests to PE-local addresses are served here, and so are
// PE_FETCH_STORE's TCM requests (answered over the PE-internal link).
#include <algorithm>

#include "kbsim/ahbm/memory_node.hpp"
#include "kbsim/pe/command.hpp"
#include "kbsim/plugin.hpp"

namespace {

using kbsim::ahbm::MemOp;
using kbsim::ahbm::MemRequest;
using kbsim::pe::TcmRequest;

constexpr kbsim::FloatParam kReadBwGbs{"read_bw_gbs", 512.0, "read channel bandwidth (0 = unlimited)"};
constexpr kbsim::FloatParam kWriteBwGbs{"write_bw_gbs", 512.0, "write channel bandwidth (0 = unlimited)"};

class PeTcm final : public kbsim::ahbm::MemoryNode {
 public:
  explicit PeTcm(const kbsim::ComponentContext& ctx)
      : MemoryNode(ctx),
        read_bw_(params().get(kReadBwGbs)),
        write_bw_(params().get(kWriteBwGbs)),
        reads_(stat(kStatReads)),
        writes_(stat(kStatWrites)),
        read_busy_(stat(kStatReadBusyNs)),
        write_busy_(stat(kStatWriteBusyNs)) {
    params().check(read_bw_ >= 0, kReadBwGbs, "must be >= 0 (0 = unlimited)");
    params().check(write_bw_ >= 0, kWriteBwGbs, "must be >= 0 (0 = unlimited)");
  }

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
    i.params = {kReadBwGbs, kWriteBwGbs};
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
  kbsim::Tick read_free_ = 0, write_free_ = 0;
  kbsim::Stat &reads_, &writes_, &read_busy_, &write_busy_;
};

}  // namespace

KBSIM_PLUGIN("pe_tcm") { kbsim::add_component<PeTcm>(plugin); }
