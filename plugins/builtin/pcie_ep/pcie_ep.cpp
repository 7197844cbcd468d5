// builtin.pcie_ep: the host <-> device boundary of an IO chiplet
// (docs/model.md, "IO chiplet and cube blocks"). Host memory requests enter
// here: they are checked against the memory map, and against the target device
// and destination memory kind when they state them (a bad one completes with
// ok=false; one for another SIP's device is refused, WRONG_DEVICE, never
// forwarded), then go straight to the serving node over the memory path
// (io_noc, UCIe, mesh), bypassing io_cpu and M_CPU; with `via_mcpu` they go
// through io_cpu and the cube's M_CPU DMA instead. Everything else passing
// through (e.g. cross-SIP traffic) is stored and forwarded: a message is
// received whole, then sent on after the overhead.
#include "kbsim/ahbm/memory_node.hpp"
#include "kbsim/plugin.hpp"

namespace {

using kbsim::Ref;
using kbsim::ahbm::MemRequest;

constexpr kbsim::FloatParam kOverheadNs{"overhead_ns", 5.0, "protocol overhead per message, each direction"};

class PcieEp final : public kbsim::ahbm::MemoryNode, public kbsim::ahbm::MemInitiator {
 public:
  explicit PcieEp(const kbsim::ComponentContext& ctx)
      : MemoryNode(ctx),
        overhead_(overhead_param(kOverheadNs, true)),
        requests_(stat(kStatHostRequests)),
        errors_(stat(kStatHostErrors)),
        forwarded_(stat(kStatForwarded)) {}

  // Statistics, declared once: info() lists them, stat() binds them.
  static constexpr kbsim::StatDef kStatHostRequests{"host_requests", kbsim::StatKind::kCounter, "requests",
                                                    "host memory requests accepted"};
  static constexpr kbsim::StatDef kStatHostErrors{"host_errors", kbsim::StatKind::kCounter, "requests",
                                                  "host requests refused (bad address, length, device or memory kind)"};
  static constexpr kbsim::StatDef kStatForwarded{"forwarded", kbsim::StatKind::kCounter, "messages",
                                                 "messages passed through"};

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "pcie_ep";
    i.summary = "PCIe endpoint: host memory requests enter here; store-and-forward for traffic passing through";
    i.params = {kOverheadNs};
    i.ports = {{"pcie", "to and from the tray switch"}, {"io_internal", "to and from the IO chiplet's io_noc"}};
    i.stats = {kStatHostRequests, kStatHostErrors, kStatForwarded};
    return i;
  }

  void setup() override {
    if (where().sip >= 0 && where().io >= 0)
      io_cpu_ = find_node(
          kbsim::ahbm::names::io(static_cast<unsigned>(where().sip), static_cast<unsigned>(where().io), "io_cpu"));
  }

  void submit(Ref<MemRequest> r, kbsim::ahbm::MemClient* client) override {
    r->client = client;
    r->t_issue = now();
    auto refused = kbsim::ahbm::wrong_device(r->target_device, where().sip, id(),
                                             r->op == kbsim::ahbm::MemOp::kWrite ? "a memory write" : "a memory read");
    if (refused) r->completion = std::move(*refused);
    if (refused || !prepare(*r, "memory")) {
      ++errors_.count;
      schedule(overhead_, kRefused, std::move(r));
      return;
    }
    ++requests_.count;
    r->t_start = now();
    if (r->via_mcpu) {
      if (io_cpu_ == kNoNode) fail("via_mcpu needs this SIP's io_cpu, which is not in the topology");
      r->target = io_cpu_;
      r->view = 0;  // command routing: all edges
    }
    launch(std::move(r), overhead_);
  }

  void on_timer(std::uint64_t, Ref<kbsim::Message> msg) override { complete(msg->as<MemRequest>()); }

  void on_message(kbsim::PortIndex, Ref<kbsim::Message> msg) override {
    if (msg->is<MemRequest>()) {
      auto& r = msg->as<MemRequest>();
      if (r.is_response && r.initiator == index()) {
        schedule(overhead_, kDone, std::move(msg));
        return;
      }
    }
    const kbsim::Route* route = msg->route;
    kbsim::PortIndex out = route ? route->out_port_at(index()) : kbsim::kNoPort;
    if (out == kbsim::kNoPort) fail("received a message that does not pass through here");
    ++forwarded_.count;
    send(out, std::move(msg), overhead_);
  }

 private:
  static constexpr std::uint64_t kRefused = 1, kDone = 2;
  static constexpr kbsim::NodeIndex kNoNode = ~kbsim::NodeIndex{0};
  kbsim::Tick overhead_;
  kbsim::NodeIndex io_cpu_ = kNoNode;
  kbsim::Stat &requests_, &errors_, &forwarded_;
};

}  // namespace

KBSIM_PLUGIN("pcie_ep") { kbsim::add_component<PcieEp>(plugin); }
