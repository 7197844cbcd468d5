// Transit (forwarding) base: forwards flit by flit without reassembly and pays
// its overhead once per transaction, on the first flit (wormhole switching).
// One serial worker per node: a first flit's overhead delays the flits queued
// behind it, as in a single-issue router pipeline. Control messages (0 bytes)
// pay the overhead without the worker, so their latency does not depend on load;
// those on a request channel (Message::request_channel) pay none.
#pragma once

#include <algorithm>

#include "kbsim/component.hpp"

namespace kbsim {

class Forwarder : public Component {
 public:
  explicit Forwarder(const ComponentContext& ctx)
      : Component(ctx),
        overhead_(ns_to_ticks(params().get(kOverheadNs))),
        transactions_(stat(kStatTransactions)),
        flits_(stat(kStatFlits)),
        bytes_(stat(kStatBytes)) {
    params().check(params().get(kOverheadNs) >= 0.0, kOverheadNs, "must be >= 0");
    set_transit_cost(overhead_);
  }

  /// Parameters, ports and statistics every forwarder has; extend them in a derived info().
  // Declared once: info() lists them, the constructor reads and binds them.
  static constexpr FloatParam kOverheadNs{"overhead_ns", 0.0, "per-transaction overhead, paid once on the first flit"};
  static constexpr StatDef kStatTransactions{"transactions", StatKind::kCounter, "",
                                             "messages whose first flit passed"};
  static constexpr StatDef kStatFlits{"flits", StatKind::kCounter, "", "flits forwarded"};
  static constexpr StatDef kStatBytes{"bytes", StatKind::kCounter, "bytes", "payload bytes forwarded"};

  static ComponentInfo base_info(std::string type, std::string summary) {
    ComponentInfo i;
    i.type = std::move(type);
    i.summary = std::move(summary);
    i.params = {kOverheadNs};
    i.ports = {{"*", "any number of links of any kind, in and out"}};
    i.stats = {kStatTransactions, kStatFlits, kStatBytes};
    i.flit_aware = true;
    return i;
  }

  void on_flit(PortIndex in, const Flit& flit) override {
    // A control message (one 0-byte flit) is decoded on its own, as it crosses
    // links: it pays the overhead but neither waits for the worker nor holds it
    // (the reference forwards 0-byte transactions outside its serial inbox).
    const bool control = flit.count == 1 && flit.bytes == 0;
    Tick start = control ? now() : std::max(now(), worker_free_);
    Tick done = start + (flit.first() && !(control && flit.msg->request_channel) ? overhead_ : 0);
    if (!control) worker_free_ = done;
    if (flit.first()) ++transactions_.count;
    ++flits_.count;
    bytes_.count += flit.bytes;
    forward(select_output(in, flit), flit, done + pipeline_);
  }

 protected:
  /// The out-port for a flit. By default it follows the message's route.
  virtual PortIndex select_output(PortIndex in, const Flit& flit) {
    (void)in;
    const Route* r = flit.msg->route;
    if (r == nullptr) fail("flit of a message without a route");
    if (flit.hop >= r->ports.size() || r->nodes[flit.hop] != index()) fail("flit arrived off its route");
    return r->ports[flit.hop];
  }

  /// Set the latency every flit and control message spends after the worker releases it (a fully pipelined stage:
  /// it delays them without holding the worker). 0 unless set. A field, not a virtual call: it is paid per flit.
  /// Routing then charges what one message pays here: the overhead plus one pass of the pipeline.
  void set_pipeline(Tick t) {
    pipeline_ = t;
    set_transit_cost(overhead_ + pipeline_);
  }

  Tick overhead() const noexcept { return overhead_; }

 private:
  Tick overhead_;
  Tick pipeline_ = 0;
  Tick worker_free_ = 0;
  Stat& transactions_;
  Stat& flits_;
  Stat& bytes_;
};

}  // namespace kbsim
