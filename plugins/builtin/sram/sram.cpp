// builtin.sram: the cube's shared SRAM, a terminal scratchpad (docs/model.md,
// "IO chiplet and cube blocks"). A request pays the overhead once (one serial
// port) and is answered on its way back: a read returns the data, a write a
// 0-byte acknowledgement. The bandwidth limit is the router link's; the SRAM
// adds no drain of its own.
#include <algorithm>

#include "kbsim/ahbm/memory_node.hpp"
#include "kbsim/plugin.hpp"

namespace {

using kbsim::ahbm::MemRequest;

constexpr kbsim::FloatParam kOverheadNs{"overhead_ns", 2.0, "access overhead per request (serial)"};
constexpr kbsim::IntParam kSizeMb{"size_mb", 32, "capacity (informational; addresses are checked against 32 MiB)"};

class Sram final : public kbsim::ahbm::MemoryNode {
 public:
  explicit Sram(const kbsim::ComponentContext& ctx)
      : MemoryNode(ctx),
        overhead_(overhead_param(kOverheadNs, true)),
        requests_(stat(kStatRequests)),
        bytes_(stat(kStatBytes)) {
    params().check(params().get(kSizeMb) > 0, kSizeMb, "must be > 0");
  }

  // Statistics, declared once: info() lists them, stat() binds them.
  static constexpr kbsim::StatDef kStatRequests{"requests", kbsim::StatKind::kCounter, "requests", "requests served"};
  static constexpr kbsim::StatDef kStatBytes{"bytes", kbsim::StatKind::kCounter, "bytes", "bytes read or written"};

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "sram";
    i.summary = "cube shared SRAM: terminal scratchpad answering reads and writes";
    i.params = {kOverheadNs, kSizeMb};
    i.ports = {{"router_to_sram", "from its router: requests", kbsim::message_types<kbsim::ahbm::MemRequest>()},
               {"sram_to_router", "to its router: responses"}};
    i.stats = {kStatRequests, kStatBytes};
    return i;
  }

  void on_message(kbsim::PortIndex, kbsim::Ref<kbsim::Message> msg) override {
    kbsim::Ref<MemRequest> r = request(msg);
    if (r->is_response) fail("received a memory response; the SRAM only serves requests");
    free_ = std::max(now(), free_) + overhead_;
    ++requests_.count;
    bytes_.count += r->nbytes;
    r->t_serviced = free_;
    reply(std::move(r), free_ - now());
  }

 private:
  kbsim::Tick overhead_;
  kbsim::Tick free_ = 0;
  kbsim::Stat &requests_, &bytes_;
};

}  // namespace

KBSIM_PLUGIN("sram") { kbsim::add_component<Sram>(plugin); }
