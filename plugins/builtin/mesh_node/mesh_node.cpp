// builtin.mesh_node: a node of the message-mesh workload (the same workload
// as SST's MessageMesh test). At time 0 it sends one event on each of its
// out-ports; every event it receives it sends on through an out-port chosen
// uniformly at random by its own seeded generator, after holding it for
// delay_ns (0 by default, as in SST's test): its promise to split runs, whose
// windows then grow by it (docs/scale-out.md, "Lookahead").
#include "kbsim/plugin.hpp"
#include "kbsim/rng.hpp"

namespace {

struct MeshEvent final : kbsim::Message {
  static constexpr std::string_view kName = "mesh.Event";
  static constexpr kbsim::TypeId kType = kbsim::type_id(kName);
  MeshEvent() : Message(kType) {}
  void save(kbsim::ByteWriter&) const override {}  // nothing of its own: it crosses between processes as it is
  void load(kbsim::ByteReader&) override {}
};

constexpr kbsim::IntParam kSeed{"seed", 1, "seed of the generator; each node mixes in its own index"};
constexpr kbsim::FloatParam kDelayNs{"delay_ns", 0.0, "time it holds an event before sending it on"};

class MeshNode final : public kbsim::Component {
 public:
  explicit MeshNode(const kbsim::ComponentContext& ctx)
      : Component(ctx),
        rng_(kbsim::Rng::derive(static_cast<std::uint64_t>(params().get(kSeed)), index())),
        delay_(kbsim::ns_to_ticks(params().get(kDelayNs))),
        stat_received_(stat(kStatReceived)),
        ports_(static_cast<std::uint32_t>(out_ports().size())) {}

  // Statistics, declared once: info() lists them, stat() binds them.
  static constexpr kbsim::StatDef kStatReceived{"received", kbsim::StatKind::kCounter, "events",
                                                "events delivered to this node"};

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "mesh_node";
    i.summary = "message-mesh node: forwards every event it receives to a random neighbour";
    i.params = {kSeed, kDelayNs};
    i.send_delay_param = kDelayNs.name;  // it sends nothing sooner than that after it receives
    i.ports = {{"mesh", "links to neighbours (the bench gives four: +x, -x, +y, -y)"}};
    i.stats = {kStatReceived};
    return i;
  }

  void setup() override {
    for (kbsim::PortIndex p = 0; p < ports_; ++p) send(p, kbsim::make_message<MeshEvent>(), delay_);
  }

  void finish() override { stat_received_.count = received_; }

  void on_message(kbsim::PortIndex, kbsim::Ref<kbsim::Message> msg) override {
    ++received_;
    send(rng_.below(ports_), std::move(msg), delay_);
  }

 private:
  kbsim::Rng rng_;
  kbsim::Tick delay_;
  kbsim::Stat& stat_received_;
  std::uint64_t received_ = 0;  // kept here (hot) and published in finish()
  std::uint32_t ports_;
};

}  // namespace

KBSIM_PLUGIN("mesh_node") {
  kbsim::add_component<MeshNode>(plugin);
  kbsim::add_message<MeshEvent>(plugin);
}
