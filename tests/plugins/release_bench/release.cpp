// test.release: builds two systems of the configured topology, writes 256 and then 512 bytes through PE0's DMA
// engine, one write per system, and releases each when done with it (BenchContext::release), or keeps both
// (--param release=false): results.json must be the same either way. --param misuse=WHAT then uses the first,
// released system: run, component, service, again (releases it a second time) or configured (releases that).
#include <string>

#include "kbsim/ahbm/bench_client.hpp"
#include "kbsim/ahbm/memory.hpp"
#include "kbsim/ahbm/memory_map.hpp"
#include "kbsim/ahbm/names.hpp"
#include "kbsim/plugin.hpp"

namespace {

namespace ahbm = kbsim::ahbm;

constexpr kbsim::BoolParam kRelease{"release", true, "release each system when done with it"};
constexpr kbsim::StringParam kMisuse{"misuse", "", "what to do wrong after the first release (empty: nothing)"};

struct Ignore final : ahbm::MemClient {
  void on_complete(ahbm::MemRequest&) override {}
};

class Release final : public kbsim::Bench {
 public:
  static kbsim::BenchInfo info() {
    kbsim::BenchInfo i{"release", "test bench: two systems, each released when done with it", {kRelease, kMisuse}};
    i.reads_topology = true;
    return i;
  }

  void run(kbsim::BenchContext& ctx) override {
    const kbsim::Graph& graph = ctx.topology();
    const ahbm::MemoryMap map = ahbm::MemoryMap::from(graph.attrs);
    const bool release = ctx.params().get(kRelease);
    kbsim::System* first = nullptr;
    for (std::uint64_t bytes : {256u, 512u}) {
      kbsim::System& sys = ctx.build(graph);
      auto r = kbsim::make_message<ahbm::MemRequest>();
      r->op = ahbm::MemOp::kWrite;
      r->pa = ahbm::pe_hbm_addr(0, 0, 0, 0, map.slice_bytes);
      r->nbytes = bytes;
      Ignore ignore;
      {
        ahbm::BenchMemClient client(sys, ignore);
        client.submit(ahbm::initiator_of(sys, graph, ahbm::names::pe_part(0, 0, 0, "pe_dma")), r);
        client.run();
      }
      if (release) ctx.release(sys);
      // What a released system still answers.
      const std::string key = std::to_string(bytes);
      ctx.metrics().set("bursts_" + key, sys.stat(ahbm::names::hbm_ctrl(0, 0, 0), "bursts").count);
      ctx.metrics().set("links_used_" + key, static_cast<std::uint64_t>(sys.link_use().size()));
      ctx.metrics().set("end_ns_" + key, kbsim::ticks_to_ns(sys.now()));
      ctx.metrics().set("idle_" + key, sys.idle());
      if (!first) first = &sys;
    }
    const std::string& misuse = ctx.params().get(kMisuse);
    if (misuse == "run") first->run();
    if (misuse == "component") first->component(ahbm::names::hbm_ctrl(0, 0, 0));
    if (misuse == "service") first->find_service("runtime");
    if (misuse == "again") ctx.release(*first);
    if (misuse == "configured") ctx.release(ctx.configured());
  }
};

}  // namespace

KBSIM_PLUGIN("test_release") { kbsim::add_bench<Release>(plugin); }
