// vendor_switch: a transit node from outside the kbsim tree. It behaves like
// kbsim::Forwarder (wormhole: forwards flit by flit along the message's route,
// one serial worker, `overhead_ns` paid once per message on its first flit) and
// adds a fixed pipeline latency, `pipeline_ns`, to every flit.
//
// The pipeline is fully pipelined: it delays each flit but does not hold the
// worker, so it adds latency without lowering throughput.
#include "kbsim/forwarder.hpp"
#include "kbsim/plugin.hpp"

namespace {

constexpr kbsim::FloatParam kPipelineNs{"pipeline_ns", 1.0, "pipeline latency added to every flit"};

class VendorSwitch final : public kbsim::Forwarder {
 public:
  explicit VendorSwitch(const kbsim::ComponentContext& ctx)
      : Forwarder(ctx) {  // reads overhead_ns and registers the base statistics
    params().check(params().get(kPipelineNs) >= 0.0, kPipelineNs, "must be >= 0");
    set_pipeline(kbsim::ns_to_ticks(params().get(kPipelineNs)));  // routing charges it too
  }

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i =
        base_info("vendor_switch", "vendor transit node: wormhole forwarding plus a fixed per-flit pipeline latency");
    i.params.push_back(kPipelineNs);
    // Every flit leaves at least the pipeline after it arrives: a promise that lets a split run cut a link this
    // switch sends on with windows longer by it (docs/scale-out.md, "Lookahead").
    i.send_delay_param = kPipelineNs.name;
    return i;
  }
};

}  // namespace

KBSIM_PLUGIN("vendor_switch") { kbsim::add_component<VendorSwitch>(plugin); }
