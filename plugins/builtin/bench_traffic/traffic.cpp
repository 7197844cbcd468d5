// traffic: run the configured topology (--topology, --set) until its traffic
// sources are done, and report every endpoint's packet latencies.
#include <string>

#include "kbsim/plugin.hpp"

namespace {

constexpr kbsim::StringParam kEndpointImpl{"endpoint_impl", "builtin.endpoint",
                                           "implementation whose nodes are reported"};

class Traffic final : public kbsim::Bench {
 public:
  static kbsim::BenchInfo info() {
    kbsim::BenchInfo i{
        "traffic", "runs the configured topology to completion and reports endpoint latencies", {kEndpointImpl}};
    i.splits = true;  // it only runs the system and reads statistics
    i.reads_topology = true;
    return i;
  }

  void run(kbsim::BenchContext& ctx) override {
    const std::string& impl = ctx.params().get(kEndpointImpl);
    kbsim::Graph g = ctx.topology();
    std::vector<std::string> endpoints;
    for (const auto& n : g.nodes)
      if (n.impl == impl) endpoints.push_back(n.id);
    kbsim::System& sys = ctx.build(std::move(g));
    sys.run();
    sys.finish();

    std::uint64_t sent = 0, received = 0;
    auto& list = ctx.metrics().list("endpoints");
    for (const auto& id : endpoints) {
      auto stat = [&](const char* name) -> const kbsim::Stat& { return sys.stat(id, name); };
      sent += stat("sent").count;
      std::uint64_t r = stat("received").count;
      received += r;
      if (r == 0) continue;
      auto& e = list.append();
      e.set("node", id);
      e.set("received", r);
      e.set("bytes", stat("bytes_received").count);
      e.set("latency_min_ns", stat("latency_min_ns").value);
      e.set("latency_max_ns", stat("latency_max_ns").value);
      e.set("latency_mean_ns", stat("latency_sum_ns").value / static_cast<double>(r));
      e.set("last_arrival_ns", stat("last_arrival_ns").value);
      ctx.note(id + ": " + std::to_string(r) + " packets, latency " + fmt(stat("latency_min_ns").value) + ".." +
               fmt(stat("latency_max_ns").value) + " ns, last at " + fmt(stat("last_arrival_ns").value) + " ns");
    }
    ctx.metrics().set("sent", sent);
    ctx.metrics().set("received", received);
    if (sent == 0)
      throw kbsim::BenchError("NO_REQUESTS", "no " + impl + " in the topology sends anything (set send_to)");
  }

 private:
  static std::string fmt(double ns) {
    std::string s = std::to_string(ns);
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
  }
};

}  // namespace

KBSIM_PLUGIN("bench_traffic") { kbsim::add_bench<Traffic>(plugin); }
