// custom.store_forward: a transit node that waits for the whole message before
// sending it on (store-and-forward), in contrast to builtin.forwarding's
// wormhole switching. Same parameters, so the two swap by one config line.
#include <algorithm>

#include "kbsim/plugin.hpp"

namespace {

constexpr kbsim::FloatParam kOverheadNs{"overhead_ns", 0.0, "per-message overhead before sending on"};

class StoreForward final : public kbsim::Component {
 public:
  explicit StoreForward(const kbsim::ComponentContext& ctx)
      : Component(ctx),
        overhead_(kbsim::ns_to_ticks(params().get(kOverheadNs))),
        transactions_(stat(kStatTransactions)),
        bytes_(stat(kStatBytes)) {
    params().check(params().get(kOverheadNs) >= 0.0, kOverheadNs, "must be >= 0");
    set_transit_cost(overhead_);
  }

  // Statistics, declared once: info() lists them, stat() binds them.
  static constexpr kbsim::StatDef kStatTransactions{"transactions", kbsim::StatKind::kCounter, "",
                                                    "messages forwarded"};
  static constexpr kbsim::StatDef kStatBytes{"bytes", kbsim::StatKind::kCounter, "bytes", "payload bytes forwarded"};

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "store_forward";
    i.summary = "transit node that receives a whole message, then sends it on (store-and-forward)";
    i.params = {kOverheadNs};
    i.ports = {{"*", "any number of links of any kind, in and out"}};
    i.stats = {kStatTransactions, kStatBytes};
    return i;
  }

  void on_message(kbsim::PortIndex, kbsim::Ref<kbsim::Message> msg) override {
    if (msg->route == nullptr) fail("message without a route");
    kbsim::PortIndex out = msg->route->out_port_at(index());
    if (out == kbsim::kNoPort) fail("message arrived off its route");
    // A control message on the request channel passes without the overhead (kbsim::Message::request_channel).
    const bool free = msg->bytes == 0 && msg->request_channel;
    kbsim::Tick done = std::max(now(), worker_free_) + (free ? 0 : overhead_);
    worker_free_ = done;
    ++transactions_.count;
    bytes_.count += msg->bytes;
    send(out, std::move(msg), done - now());
  }

 private:
  kbsim::Tick overhead_;
  kbsim::Tick worker_free_ = 0;
  kbsim::Stat& transactions_;
  kbsim::Stat& bytes_;
};

}  // namespace

KBSIM_PLUGIN("store_forward") { kbsim::add_component<StoreForward>(plugin); }
