// Transit (forwarding) base: forwards flit by flit without reassembly and pays
// its overhead once per transaction, on the first flit (wormhole switching).
// One serial worker per node: a first flit's overhead delays the flits queued
// behind it, as in a single-issue router pipeline. Control messages (0 bytes)
// pay the overhead without the worker, so their latency does not depend on load;
// those on a request channel (Message::request_channel) pay none.
#pragma once

#include <algorithm>
#include <optional>

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
    i.trains = true;
    return i;
  }

  void on_flit(PortIndex in, const Flit& flit) override {
    // A control message (one 0-byte flit) is decoded on its own, as it crosses
    // links: it pays the overhead but neither waits for the worker nor holds it
    // (the reference forwards 0-byte transactions outside its serial inbox).
    const bool control = flit.count == 1 && flit.bytes == 0;
    if (train_.valid() && !control && flit.msg != train_msg_) [[unlikely]]
      let_go();  // another message meets the train this worker took whole
    run_flit(in, flit, control);
  }

  /// A train the worker meets alone is taken whole: each flit's time through the worker is computed, not
  /// simulated, and the train goes on as one (docs/architecture.md, "Flit trains advanced as a whole").
  bool on_train(PortIndex in, const Train& train) override {
    if (train_.valid() && let_go()) return false;  // the one it met goes on flit by flit: so does this one
    const std::optional<FlitTimes> done = train.arrive->served(worker_free_, overhead_);
    if (!done || !forward_train(select_output(in, train.flit(0)), train, done->shifted(pipeline_))) return false;
    train_ = train.id;
    train_msg_ = train.msg;
    train_free_ = worker_free_;
    train_last_ = train.arrive->at(train.lim - 1);
    worker_free_ = done->at(train.lim - 1);
    ++transactions_.count;
    flits_.count += train.lim;
    bytes_.count += train.bytes(0, train.lim);
    return true;
  }

  void on_train_cut(const Train& train, std::uint32_t keep) override {
    worker_free_ = train.arrive->served(train_free_, overhead_)->at(keep - 1);
    train_last_ = train.arrive->at(keep - 1);
    flits_.count -= train.whole - keep;
    bytes_.count -= train.bytes(keep, train.whole);
  }

 private:
  /// Stop holding the train taken whole: every flit of it has passed, or the core cuts it here. Whether it cut.
  bool let_go() {
    const bool cut = now() <= train_last_;
    if (cut)
      cut_train(train_);
    else
      done_train(train_);
    train_ = {};
    return cut;
  }

  void run_flit(PortIndex in, const Flit& flit, bool control) {
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
  // The train the worker took whole (train_ valid): its message, the worker's state before it, its last flit's time.
  TrainId train_;
  const Message* train_msg_ = nullptr;
  Tick train_free_ = 0, train_last_ = 0;
  Stat& transactions_;
  Stat& flits_;
  Stat& bytes_;
};

}  // namespace kbsim
