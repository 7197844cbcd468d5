// builtin.forwarding (also builtin.switch, builtin.noc, builtin.ucie): the
// generic transit node. Wormhole forwarding along the message's route with a
// per-transaction overhead; all behaviour comes from kbsim::Forwarder.
//
// `pipeline_ns` (0 by default, the reference's model) adds a fully pipelined
// latency to every flit and every control message, on top of the overhead: it
// delays each one without holding the worker. A node with a pipeline promises
// it (docs/scale-out.md, "Lookahead"), so a run in parts may cut the links it
// sends on with windows longer by it: a UCIe PHY modeled with its latency as a
// per-flit pipeline instead of a per-transaction overhead (docs/model.md,
// "Transit nodes") is where the AHBM system can be cut.
#include "kbsim/forwarder.hpp"
#include "kbsim/plugin.hpp"

namespace {

constexpr kbsim::FloatParam kPipelineNs{"pipeline_ns", 0.0,
                                        "latency added to every flit and control message, without holding the worker"};

class Forwarding final : public kbsim::Forwarder {
 public:
  explicit Forwarding(const kbsim::ComponentContext& ctx) : Forwarder(ctx) {
    params().check(params().get(kPipelineNs) >= 0.0, kPipelineNs, "must be >= 0");
    set_pipeline(kbsim::ns_to_ticks(params().get(kPipelineNs)));
  }

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i =
        base_info("forwarding", "transit node: forwards flit by flit along the route, overhead once per transaction");
    i.params.push_back(kPipelineNs);
    i.send_delay_param = kPipelineNs.name;  // nothing leaves sooner than the pipeline after it arrives
    return i;
  }
};

}  // namespace

KBSIM_PLUGIN("forwarding") { kbsim::add_component<Forwarding>(plugin); }
