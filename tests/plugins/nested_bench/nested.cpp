// test.nested: a bench that runs another bench (BenchContext::run_bench) with
// one parameter and reports what it read from the other's metrics; and one that
// reads the topology without declaring it.
#include <stdexcept>
#include <string>

#include "kbsim/bench.hpp"
#include "kbsim/plugin.hpp"

namespace {

class Nested final : public kbsim::Bench {
 public:
  static kbsim::BenchInfo info() {
    return {"nested",
            "test bench: runs --param bench with --param arg and copies its 'routing' metric",
            {kbsim::param_string("bench", "probe", "the bench to run"),
             kbsim::param_string("arg", "case=h2d-1hop", "one key=value parameter for it")},
            false,
            true};
  }
  void run(kbsim::BenchContext& ctx) override {
    const std::string& bench = ctx.params().get_string("bench");
    const std::string& arg = ctx.params().get_string("arg");
    if (bench == "!throw") throw std::runtime_error("the bench's own bug");  // a fault of the bench's code
    // Running itself, it passes its own parameters on: a recursion the runner must stop.
    const kbsim::Metrics& inner =
        bench == "nested" ? ctx.run_bench(bench, {"bench=nested", "arg=" + arg}) : ctx.run_bench(bench, {arg});
    const kbsim::Metrics::Entry* routing = inner.find("routing");
    ctx.metrics().set("inner_routing", routing ? routing->scalar : kbsim::Metrics::Scalar{std::string("none")});
    ctx.build(ctx.topology());  // a run builds at least one system of its own
  }
};

/// A bench that runs on the configured topology without declaring so (BenchInfo::reads_topology): a contract
/// broken, which the run reports as this bench's (its plugin's) error.
class Undeclared final : public kbsim::Bench {
 public:
  static kbsim::BenchInfo info() { return {"undeclared-topology", "test bench: reads the topology undeclared", {}}; }
  void run(kbsim::BenchContext& ctx) override { ctx.configured().run(); }
};

}  // namespace

KBSIM_PLUGIN("test_nested") {
  kbsim::add_bench<Nested>(plugin);
  kbsim::add_bench<Undeclared>(plugin);
}
