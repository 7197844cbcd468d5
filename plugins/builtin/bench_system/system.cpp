// system: run any topology as it is configured (--topology, --set), whoever
// its senders are, until nothing is left to do (or until_ns), and report what
// every component and link did: results.json's `components` and `links`.
#include <string>

#include "kbsim/plugin.hpp"
#include "kbsim/text.hpp"

namespace {

constexpr kbsim::FloatParam kUntilNs{"until_ns", 0.0, "stop at this simulated time; 0: run until no event is left"};

class SystemBench final : public kbsim::Bench {
 public:
  static kbsim::BenchInfo info() {
    kbsim::BenchInfo i{
        "system",
        "runs the configured topology until nothing is left to do (or until_ns) and reports every component's "
        "statistics and every link's traffic",
        {kUntilNs}};
    i.splits = true;  // it only runs the system and reads what it did
    i.reads_topology = true;
    return i;
  }

  void run(kbsim::BenchContext& ctx) override {
    const double until_ns = ctx.params().get(kUntilNs);
    ctx.params().check(until_ns >= 0, kUntilNs, "must be >= 0");
    kbsim::System& sys = ctx.configured();
    if (until_ns > 0)
      sys.run_until(kbsim::ns_to_ticks(until_ns));
    else
      sys.run();
    const bool idle = sys.idle();
    kbsim::Metrics& m = ctx.metrics();
    m.set("idle", idle);
    m.set("sim_time_ns", kbsim::ticks_to_ns(sys.now()));
    m.set("events", sys.events());
    ctx.note(std::to_string(sys.node_count()) + " components, " + std::to_string(sys.events()) +
             " events to t=" + kbsim::format_ns(kbsim::ticks_to_ns(sys.now())) + " ns, " +
             (idle ? "nothing left to do" : "stopped at until_ns with work left"));
    if (sys.events() == 0) ctx.note("no component scheduled any work: is a sender configured?");
    ctx.note("every component's statistics and every link's traffic are in results.json (components, links)");
  }
};

}  // namespace

KBSIM_PLUGIN("bench_system") { kbsim::add_bench<SystemBench>(plugin); }
