// Exact link timing through real plugins: serialization per flit, propagation,
// wormhole (cut-through) vs store-and-forward, contention, control messages,
// mixed bandwidths, partial flits, distance-based latency, link statistics.
//
// Units: GB/s = bytes per ns, so a 256 B flit takes 256/bw ns on a link.
// Every expected value is worked out by hand in the comments, in ps.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "harness.hpp"

namespace kbsim {
namespace {

constexpr Tick ns(Tick n) { return n * kPsPerNs; }

class LinkTiming : public ::testing::Test {
 protected:
  /// Build, run to completion and finish.
  std::unique_ptr<core::SimulatedSystem> run(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
    auto sys = test::build_system(test::shared_registry(), yaml, overrides);
    sys->run();
    sys->finish();
    return sys;
  }
  /// A statistic in ns, as exact picoseconds.
  static Tick ps(const core::SimulatedSystem& sys, std::string_view node, std::string_view stat) {
    return ns_to_ticks(sys.stat(node, stat).value);
  }
  /// A link's traffic as one comparable value: messages, flits, bytes, busy time.
  static std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, Tick> use(const core::Traffic& t) {
    return {t.messages, t.flits, t.bytes, t.busy};
  }
  /// What happened on the link src -> dst.
  static core::Traffic link(const core::SimulatedSystem& s, std::string_view src, std::string_view dst) {
    const core::Simulation& sys = s.simulation();
    for (const auto& l : sys.elaboration()->links)
      if (sys.elaboration()->nodes[l.src].id == src && sys.elaboration()->nodes[l.dst].id == dst) return s.traffic(l);
    throw std::runtime_error("no link " + std::string(src) + " -> " + std::string(dst));
  }
};

// --- one hop ----------------------------------------------------------------

const char* kOneHop = R"(
nodes:
  - { id: host, impl: builtin.endpoint, params: { send_to: mem, send_bytes: 4096 } }
  - { id: mem, impl: builtin.endpoint }
edges:
  - { src: host, dst: mem, bandwidth_gbs: 64, latency_ns: 2 }
)";

TEST_F(LinkTiming, OneHopIsFlitsTimesSerializationPlusLatency) {
  // 4096 B / 256 B = 16 flits; 256 B at 64 GB/s = 4 ns each: 64 ns + 2 ns = 66 ns.
  auto sys = run(kOneHop);
  EXPECT_EQ(sys->stat("mem", "received").count, 1u);
  EXPECT_EQ(sys->stat("mem", "bytes_received").count, 4096u);
  EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 66000u);
  EXPECT_EQ(ps(*sys, "mem", "last_arrival_ns"), 66000u);
  EXPECT_EQ(sys->now(), ns(66));
}

TEST_F(LinkTiming, OneHopLinkStatistics) {
  auto sys = run(kOneHop);
  ASSERT_EQ(sys->simulation().elaboration()->links.size(), 1u);
  const core::Link& l = sys->simulation().elaboration()->links[0];
  const core::Traffic use = sys->traffic(l);
  EXPECT_EQ(use.bytes, 4096u);
  EXPECT_EQ(use.flits, 16u);
  EXPECT_EQ(use.messages, 1u);
  EXPECT_EQ(use.busy, ns(64));  // serialization only; propagation does not occupy the link
  EXPECT_EQ(l.latency, ns(2));
  EXPECT_EQ(l.ser_full, ns(4));
}

TEST_F(LinkTiming, StartTimeShiftsArrivalButNotLatency) {
  auto sys = run(kOneHop, {"nodes.host.params.start_ns=100"});
  EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 66000u);
  EXPECT_EQ(ps(*sys, "mem", "last_arrival_ns"), 166000u);
}

// --- two hops: wormhole vs store-and-forward ----------------------------------

const char* kTwoHops = R"(
nodes:
  - { id: host, impl: builtin.endpoint, params: { send_to: mem, send_bytes: 4096 } }
  - { id: sw, impl: builtin.forwarding, params: { overhead_ns: 5 } }
  - { id: mem, impl: builtin.endpoint }
edges:
  - { src: host, dst: sw, bandwidth_gbs: 64, latency_ns: 2 }
  - { src: sw, dst: mem, bandwidth_gbs: 64, latency_ns: 2 }
)";

TEST_F(LinkTiming, CutThroughOverTwoHops) {
  // Flit k reaches sw at 4(k+1) + 2 = 6 + 4k ns. The head pays the 5 ns
  // overhead: it leaves sw at 11, is on sw->mem 11..15. The body flits are not
  // delayed again; the second link is as fast as the first, so flit k occupies
  // it 11+4k .. 15+4k. The tail (k=15) ends at 75, arrives at 77 ns.
  // = first-flit arrival (15 + 2 = 17) + 15 flits x 4 ns.
  auto sys = run(kTwoHops);
  EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 77000u);
  EXPECT_EQ(sys->stat("sw", "transactions").count, 1u);
  EXPECT_EQ(sys->stat("sw", "flits").count, 16u);
  EXPECT_EQ(sys->stat("sw", "bytes").count, 4096u);
}

TEST_F(LinkTiming, StoreAndForwardOverTwoHops) {
  // The whole message reaches sw at 64 + 2 = 66 ns; +5 ns overhead = 71;
  // 64 ns on sw->mem + 2 ns = 137 ns.
  auto sys = run(kTwoHops, {"nodes.sw.impl=custom.store_forward"});
  EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 137000u);
  EXPECT_EQ(sys->stat("sw", "transactions").count, 1u);
  EXPECT_EQ(sys->stat("sw", "bytes").count, 4096u);
}

TEST_F(LinkTiming, CutThroughBeatsStoreAndForwardByTheSerializationOfAllButOneFlit) {
  auto ct = run(kTwoHops);
  auto sf = run(kTwoHops, {"nodes.sw.impl=custom.store_forward"});
  Tick cut = ps(*ct, "mem", "latency_min_ns"), store = ps(*sf, "mem", "latency_min_ns");
  EXPECT_LT(cut, store);
  EXPECT_EQ(store - cut, 15 * ns(4));  // store-and-forward waits for 15 more flits at sw
}

TEST_F(LinkTiming, TwoHopLinkStatisticsCountFlitsOnceAndTheMessageOnce) {
  for (const char* impl : {"builtin.forwarding", "custom.store_forward"}) {
    auto sys = run(kTwoHops, {std::string("nodes.sw.impl=") + impl});
    for (auto [src, dst] : {std::pair{"host", "sw"}, std::pair{"sw", "mem"}}) {
      const core::Traffic l = link(*sys, src, dst);
      EXPECT_EQ(l.bytes, 4096u) << impl << " " << src << "->" << dst;
      EXPECT_EQ(l.flits, 16u) << impl << " " << src << "->" << dst;
      EXPECT_EQ(l.messages, 1u) << impl << " " << src << "->" << dst;
      EXPECT_EQ(l.busy, ns(64)) << impl << " " << src << "->" << dst;
    }
  }
}

// --- contention ---------------------------------------------------------------

const char* kTwoSenders = R"(
nodes:
  - { id: a, impl: builtin.endpoint, params: { send_to: mem, send_bytes: 4096 } }
  - { id: b, impl: builtin.endpoint, params: { send_to: mem, send_bytes: 4096 } }
  - { id: sw, impl: builtin.switch }
  - { id: mem, impl: builtin.endpoint }
edges:
  - { src: a, dst: sw, bandwidth_gbs: 64, latency_ns: 2 }
  - { src: b, dst: sw, bandwidth_gbs: 64, latency_ns: 2 }
  - { src: sw, dst: mem, bandwidth_gbs: 64, latency_ns: 2 }
)";

TEST_F(LinkTiming, TwoTransfersContendForOneLinkFlitByFlit) {
  // Both senders start at 0 on their own links; flit k of each reaches sw at
  // 6 + 4k ns (a's first: a was set up first). sw has no overhead, and the
  // shared sw->mem link grants flits in the order they reach it: a0 6..10,
  // b0 10..14, a1 14..18, b1 18..22, ... so a_k = 6+8k .. 10+8k and
  // b_k = 10+8k .. 14+8k. a's tail ends at 130 -> arrives 132 ns; b's tail
  // ends at 134 -> arrives 136 ns. The link is busy 32 x 4 = 128 ns in all,
  // so the last arrival is 6 + 128 + 2 = 136 ns however flits interleave.
  auto sys = run(kTwoSenders);
  EXPECT_EQ(sys->stat("mem", "received").count, 2u);
  EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 132000u);
  EXPECT_EQ(ps(*sys, "mem", "latency_max_ns"), 136000u);
  EXPECT_EQ(ps(*sys, "mem", "last_arrival_ns"), 136000u);
  EXPECT_EQ(use(link(*sys, "sw", "mem")), std::tuple(2u, 32u, 8192u, ns(128)));
  // The links into sw did not contend.
  EXPECT_EQ(link(*sys, "a", "sw").busy, ns(64));
  EXPECT_EQ(link(*sys, "b", "sw").busy, ns(64));
}

// A train that meets nothing crosses each transit as one event; another message arriving mid-train cuts it back
// into flits at that instant (docs/architecture.md, "Flit trains advanced as a whole"). The times below are the
// flit-by-flit model's, worked out by hand; the event counts show the trains were advanced whole until the cut.
/// Every flit its own event (KBSIM_FLIT_BY_FLIT=1) while it lives.
struct FlitByFlit {
  FlitByFlit() { ::setenv("KBSIM_FLIT_BY_FLIT", "1", 1); }
  ~FlitByFlit() { ::unsetenv("KBSIM_FLIT_BY_FLIT"); }
  FlitByFlit(const FlitByFlit&) = delete;
  FlitByFlit& operator=(const FlitByFlit&) = delete;
};
/// The events the engine ran (events() counts those a train taken whole stood for too).
std::uint64_t engine_events(const core::SimulatedSystem& sys) { return sys.events() - sys.simulation().train_flits(); }

const char* kMeetMidTrain = R"(
nodes:
  - { id: a, impl: builtin.endpoint, params: { send_to: mem, send_bytes: 4096 } }
  - { id: b, impl: builtin.endpoint, params: { send_to: mem, send_bytes: 1024, start_ns: 20 } }
  - { id: c, impl: builtin.endpoint, params: { send_to: mem, send_bytes: 1024, start_ns: 21, count: 0 } }
  - { id: sw1, impl: builtin.forwarding }
  - { id: sw2, impl: builtin.forwarding }
  - { id: mem, impl: builtin.endpoint }
edges:
  - { src: a, dst: sw1, bandwidth_gbs: 64, latency_ns: 2 }
  - { src: c, dst: sw1, bandwidth_gbs: 64, latency_ns: 2 }
  - { src: sw1, dst: sw2, bandwidth_gbs: 64, latency_ns: 2 }
  - { src: b, dst: sw2, bandwidth_gbs: 64, latency_ns: 2 }
  - { src: sw2, dst: mem, bandwidth_gbs: 64, latency_ns: 2 }
)";

TEST_F(LinkTiming, ATrainAloneCrossesEachTransitAsOneEvent) {
  // a's 16 flits reach sw1 at 6 + 4k, sw2 at 12 + 4k and mem at 18 + 4k: the tail at 78 ns.
  auto sys = run(kMeetMidTrain, {"nodes.b.params.count=0"});
  EXPECT_EQ(ps(*sys, "mem", "latency_max_ns"), 78000u);
  EXPECT_EQ(link(*sys, "sw2", "mem").flits, 16u);
  EXPECT_EQ(link(*sys, "sw2", "mem").busy, ns(64));
  EXPECT_EQ(sys->stat("sw2", "flits").count, 16u);
  // a's timer, the train at sw1, the train at sw2, the message at mem; events() counts what they stand for.
  EXPECT_EQ(engine_events(*sys), 4u);
  EXPECT_EQ(sys->events(), 1u + 16u + 16u + 1u);
}

TEST_F(LinkTiming, TheSameTrainFlitByFlitTakesAnEventPerFlitPerTransit) {
  const FlitByFlit flat;
  auto sys = run(kMeetMidTrain, {"nodes.b.params.count=0"});
  EXPECT_EQ(ps(*sys, "mem", "latency_max_ns"), 78000u);
  EXPECT_EQ(engine_events(*sys), 1u + 16u + 16u + 1u);  // the timer, 16 flits at sw1, 16 at sw2, the message at mem
  EXPECT_EQ(sys->events(), engine_events(*sys));
}

TEST_F(LinkTiming, ACutTrainCountsTheEventsOfTheFlitByFlitRun) {
  for (const char* meet : {"nodes.c.params.count=0", "nodes.b.params.count=0"}) {
    auto trains = run(kMeetMidTrain, {meet, "nodes.c.params.count=1"});
    const FlitByFlit flat;
    auto flits = run(kMeetMidTrain, {meet, "nodes.c.params.count=1"});
    EXPECT_EQ(trains->events(), flits->events()) << meet;
    EXPECT_LT(engine_events(*trains), engine_events(*flits)) << meet;
    EXPECT_EQ(trains->now(), flits->now()) << meet;
  }
}

TEST_F(LinkTiming, AMessageMeetingATrainAtATransitCutsItThere) {
  // b's 4 flits reach sw2 at 26, 30, 34, 38 ns, among a's (12 + 4k). a0..a3 have left sw2 for mem by then
  // (sw2 -> mem busy until 28); from there the two share sw2 -> mem flit by flit in the order they reach sw2:
  // b0 28..32, a4 32..36, b1 36..40, a5 40..44, b2 44..48, a6 48..52, b3 52..56 (b's tail at mem at 58: 38 ns after
  // it was sent), then a7.. a15 back to back, 56..92: a's tail at mem at 94 ns.
  auto sys = run(kMeetMidTrain);
  EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 38000u);
  EXPECT_EQ(ps(*sys, "mem", "latency_max_ns"), 94000u);
  EXPECT_EQ(use(link(*sys, "sw2", "mem")), std::tuple(2u, 20u, 5120u, ns(80)));
  EXPECT_EQ(sys->stat("sw2", "transactions").count, 2u);
  EXPECT_EQ(sys->stat("sw2", "flits").count, 20u);
  EXPECT_EQ(sys->stat("sw2", "bytes").count, 5120u);
}

TEST_F(LinkTiming, AMessageMeetingATrainUpstreamCutsItAlongTheWay) {
  // c's 4 flits reach sw1 at 27, 31, 35, 39 ns, while sw2 holds a's whole train. a0..a5 have left sw1 (sw1 -> sw2
  // busy until 30); then c0 30..34, a6 34..38, c1 38..42, a7 42..46, c2 46..50, a8 50..54, c3 54..58, and a9..a15
  // 58..86 on sw1 -> sw2. sw2 sees them 6 ns after they start there and forwards each at once: c's tail reaches
  // mem at 54 + 12 = 66 (45 ns after it was sent), a's at 82 + 12 = 94.
  auto sys = run(kMeetMidTrain, {"nodes.b.params.count=0", "nodes.c.params.count=1"});
  EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 45000u);
  EXPECT_EQ(ps(*sys, "mem", "latency_max_ns"), 94000u);
  for (const auto& [src, dst] : {std::pair{"sw1", "sw2"}, std::pair{"sw2", "mem"}}) {
    const core::Traffic t = link(*sys, src, dst);
    EXPECT_EQ(t.flits, 20u) << src;
    EXPECT_EQ(t.busy, ns(80)) << src;
    EXPECT_EQ(t.messages, 2u) << src;
  }
  EXPECT_EQ(sys->stat("sw2", "flits").count, 20u);
  EXPECT_EQ(sys->stat("sw1", "bytes").count, 5120u);
}

TEST_F(LinkTiming, SystemsOfOneElaborationShareItAndNothingElse) {
  // Two systems built from one elaboration: the checked graph is shared, while the link occupancy, the statistics,
  // the components and the clock are each system's own. The second runs to 20 ns only: by then flits 0..3 of each
  // sender (at sw at 6 + 4k ns) hold sw->mem for 8 x 4 = 32 ns, and no message has ended.
  const Graph graph = test::parse_topology(kTwoSenders, "two_senders.yaml", {});
  auto shared = core::elaborate(graph, test::shared_registry());
  auto sa = core::simulated(shared, test::shared_registry());
  auto sb = core::simulated(shared, test::shared_registry());
  EXPECT_EQ(sa->simulation().elaboration(), sb->simulation().elaboration());
  EXPECT_EQ(&sa->simulation().elaboration()->nodes, &sb->simulation().elaboration()->nodes);
  core::SimulatedSystem& a = *sa;
  core::SimulatedSystem& b = *sb;
  a.run();
  a.finish();
  b.run_until(ns(20));
  b.finish();
  EXPECT_EQ(a.stat("mem", "received").count, 2u);
  EXPECT_EQ(ps(a, "mem", "last_arrival_ns"), 136000u);
  EXPECT_EQ(link(a, "sw", "mem").busy, ns(128));
  EXPECT_EQ(link(a, "sw", "mem").messages, 2u);
  EXPECT_EQ(b.now(), ns(20));
  EXPECT_EQ(b.stat("mem", "received").count, 0u);
  EXPECT_EQ(link(b, "sw", "mem").busy, ns(32));
  EXPECT_EQ(link(b, "sw", "mem").messages, 0u);
  EXPECT_NE(&a.component("mem"), &b.component("mem"));
}

TEST_F(LinkTiming, SecondMessageOnABusyLinkWaitsForTheFirst) {
  // Two packets handed to one link at t=0: the second starts when the first's
  // last flit is off the wire, at 64 ns, and arrives at 64 + 64 + 2 = 130 ns.
  auto sys = run(kOneHop, {"nodes.host.params.count=2"});
  EXPECT_EQ(sys->stat("mem", "received").count, 2u);
  EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 66000u);
  EXPECT_EQ(ps(*sys, "mem", "latency_max_ns"), 130000u);
  EXPECT_EQ(ps(*sys, "mem", "last_arrival_ns"), 130000u);
  EXPECT_EQ(sys->traffic(sys->simulation().elaboration()->links[0]).busy, ns(128));
  EXPECT_EQ(sys->traffic(sys->simulation().elaboration()->links[0]).messages, 2u);
}

TEST_F(LinkTiming, MessageHandedOverAfterTheLinkFreedDoesNotWait) {
  // Second packet at 100 ns, the link has been free since 64 ns: 100 + 66.
  auto sys = run(kOneHop, {"nodes.host.params.count=2", "nodes.host.params.interval_ns=100"});
  EXPECT_EQ(ps(*sys, "mem", "latency_max_ns"), 66000u);
  EXPECT_EQ(ps(*sys, "mem", "last_arrival_ns"), 166000u);
}

// --- control messages -----------------------------------------------------------

TEST_F(LinkTiming, ZeroByteMessagePaysOnlyLatency) {
  auto sys = run(kOneHop, {"nodes.host.params.send_bytes=0"});
  EXPECT_EQ(sys->stat("mem", "received").count, 1u);
  EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 2000u);
  const core::Traffic l = sys->traffic(sys->simulation().elaboration()->links[0]);
  EXPECT_EQ(l.bytes, 0u);
  EXPECT_EQ(l.flits, 0u);
  EXPECT_EQ(l.messages, 1u);
  EXPECT_EQ(l.busy, 0u);
}

TEST_F(LinkTiming, ZeroByteMessagesDoNotQueueBehindEachOther) {
  // Three control messages at t=0 on one link: all arrive at 2 ns.
  auto sys = run(kOneHop, {"nodes.host.params.send_bytes=0", "nodes.host.params.count=3"});
  EXPECT_EQ(sys->stat("mem", "received").count, 3u);
  EXPECT_EQ(ps(*sys, "mem", "latency_max_ns"), 2000u);
}

TEST_F(LinkTiming, ZeroByteMessageThroughATransitNodePaysLatenciesAndOverhead) {
  // 2 ns to sw, 5 ns overhead, 2 ns to mem = 9 ns, for either switching mode.
  for (const char* impl : {"builtin.forwarding", "custom.store_forward"}) {
    auto sys = run(kTwoHops, {"nodes.host.params.send_bytes=0", std::string("nodes.sw.impl=") + impl});
    EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 9000u) << impl;
    EXPECT_EQ(link(*sys, "sw", "mem").busy, 0u) << impl;
    EXPECT_EQ(link(*sys, "sw", "mem").messages, 1u) << impl;
  }
}

// --- mixed bandwidths -------------------------------------------------------------

const char* kFastThenSlow = R"(
nodes:
  - { id: host, impl: builtin.endpoint, params: { send_to: mem, send_bytes: 4096 } }
  - { id: sw, impl: builtin.forwarding, params: { overhead_ns: 3 } }
  - { id: mem, impl: builtin.endpoint }
edges:
  - { src: host, dst: sw, bandwidth_gbs: 128, latency_ns: 1 }
  - { src: sw, dst: mem, bandwidth_gbs: 32, latency_ns: 1 }
)";

TEST_F(LinkTiming, FastThenSlowIsFirstFlitArrivalPlusStreamingThroughTheSlowLink) {
  // 256 B: 2 ns at 128 GB/s, 8 ns at 32 GB/s. The head reaches sw at 2+1 = 3,
  // leaves after the overhead at 6, takes 8 ns on the slow link + 1 ns:
  // first-flit arrival at 15 ns. Body flits reach sw every 2 ns, faster than
  // the slow link drains them, so they stream back to back at 8 ns each:
  // 15 + 15 x 8 = 135 ns.
  auto sys = run(kFastThenSlow);
  EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 135000u);
  EXPECT_EQ(link(*sys, "sw", "mem").busy, ns(128));
  EXPECT_EQ(link(*sys, "host", "sw").busy, ns(32));
}

TEST_F(LinkTiming, SlowThenFastHidesTheOverheadBehindTheSlowLink) {
  // Swap the bandwidths. Flit k reaches sw at 8(k+1) + 1 = 9 + 8k ns. The head
  // leaves at 9 + 3 = 12 and arrives at 12 + 2 + 1 = 15. Flit 1 reaches sw at
  // 17, after the head has gone, so it is not delayed: body flit k arrives at
  // 9 + 8k + 2 + 1 = 12 + 8k, the tail (k=15) at 132 ns. The overhead is
  // hidden: 132 = tail on the slow link (129) + the fast hop (2 + 1).
  auto sys = run(kFastThenSlow, {"edges.0.bandwidth_gbs=32", "edges.1.bandwidth_gbs=128"});
  EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 132000u);
}

TEST_F(LinkTiming, ThreeHopsWithBidirectionalEdgesDistanceAndTwoOverheads) {
  // The default topology's shape. Links: host->sw0 64 GB/s (4 ns/flit) + 2 ns;
  // sw0->sw1 128 GB/s (2 ns/flit) + 10 mm x 0.1 ns/mm = 1 ns; sw1->mem
  // 256 GB/s (1 ns/flit) + 1 ns; overheads 5 ns (sw0) and 2 ns (sw1).
  // Packet 0: head at sw0 at 6, leaves 11, at sw1 at 11+2+1 = 14, leaves 16,
  // at mem 16+1+1 = 18. Body flit k (k>=2) reaches sw0 at 6+4k, goes straight
  // through (links downstream are faster): at mem at 6+4k+3+2 = 11+4k; the
  // tail (k=15) at 71 ns. Packets are 10 ns apart but the first link needs
  // 64 ns each, so packet i is packet 0 shifted by 64i: arrival 71 + 64i,
  // latency 71 + 54i: 71, 125, 179, 233 ns; last arrival 71 + 192 = 263 ns.
  const char* yaml = R"(
defaults:
  flit_bytes: 256
  ns_per_mm: 0.1
nodes:
  - { id: host, impl: builtin.endpoint, params: { send_to: mem, send_bytes: 4096, count: 4, interval_ns: 10 } }
  - { id: sw0, impl: builtin.switch, params: { overhead_ns: 5 } }
  - { id: sw1, impl: builtin.switch, params: { overhead_ns: 2 } }
  - { id: mem, impl: builtin.endpoint }
edges:
  - { src: host, dst: sw0, bandwidth_gbs: 64,  latency_ns: 2,   bidir: true }
  - { src: sw0,  dst: sw1, bandwidth_gbs: 128, distance_mm: 10, bidir: true }
  - { src: sw1,  dst: mem, bandwidth_gbs: 256, latency_ns: 1,   bidir: true }
)";
  auto sys = run(yaml);
  EXPECT_EQ(sys->stat("mem", "received").count, 4u);
  EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 71000u);
  EXPECT_EQ(ps(*sys, "mem", "latency_max_ns"), 233000u);
  EXPECT_EQ(ps(*sys, "mem", "latency_sum_ns"), 608000u);  // 71 + 125 + 179 + 233
  EXPECT_EQ(ps(*sys, "mem", "last_arrival_ns"), 263000u);
  ASSERT_EQ(sys->simulation().elaboration()->links.size(), 6u);
  for (const auto& l : sys->simulation().elaboration()->links) {
    if (sys->simulation().elaboration()->nodes[l.src].id == "sw0" &&
        sys->simulation().elaboration()->nodes[l.dst].id == "sw1") {
      EXPECT_EQ(l.latency, ns(1));
    }
  }
  EXPECT_EQ(link(*sys, "sw1", "sw0").messages, 0u) << "reverse links carry nothing";
  EXPECT_EQ(sys->stat("sw0", "transactions").count, 4u);
  EXPECT_EQ(sys->stat("sw1", "flits").count, 64u);
}

// --- partial flits and rounding ---------------------------------------------------

TEST_F(LinkTiming, PartialLastFlitSerializesItsOwnBytesRoundedToThePicosecond) {
  // 300 B = one 256 B flit (4000 ps at 64 GB/s) + one 44 B flit:
  // 44 / 64 ns = 687.5 ps, rounded to 688 ps. 4000 + 688 + 2000 = 6688 ps.
  auto sys = run(kOneHop, {"nodes.host.params.send_bytes=300"});
  EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 6688u);
  const core::Traffic l = sys->traffic(sys->simulation().elaboration()->links[0]);
  EXPECT_EQ(l.flits, 2u);
  EXPECT_EQ(l.bytes, 300u);
  EXPECT_EQ(l.busy, 4688u);
}

TEST_F(LinkTiming, PartialLastFlitThroughATransitNode) {
  // Overhead 0. Head: at sw at 4000 + 2000 = 6000, on sw->mem 6000..10000.
  // Tail (44 B): at sw at 4000 + 688 + 2000 = 6688, waits for the head to
  // clear sw->mem at 10000, 10000..10688, arrives at 12688 ps.
  auto sys = run(kTwoHops, {"nodes.host.params.send_bytes=300", "nodes.sw.params.overhead_ns=0"});
  EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 12688u);
  EXPECT_EQ(link(*sys, "sw", "mem").busy, 4688u);
  EXPECT_EQ(sys->stat("sw", "flits").count, 2u);
  EXPECT_EQ(sys->stat("sw", "bytes").count, 300u);
}

TEST_F(LinkTiming, MessageSmallerThanOneFlitIsOnePartialFlit) {
  // 100 B at 64 GB/s = 1562.5 ps -> 1563 ps; + 2000 ps.
  auto sys = run(kOneHop, {"nodes.host.params.send_bytes=100"});
  EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 3563u);
  EXPECT_EQ(sys->traffic(sys->simulation().elaboration()->links[0]).flits, 1u);
}

TEST_F(LinkTiming, FlitSizeComesFromTheEdge) {
  // flit_bytes 1024: 4 flits of 16 ns at 64 GB/s; the total is the same 64 ns
  // on one hop, but the cut-through pipeline fills with 16 ns flits:
  // head at sw at 18, leaves 23, tail leaves at 23 + 3 x 16 + 16 = 87, +2 = 89.
  auto sys = run(kTwoHops, {"edges.0.flit_bytes=1024", "edges.1.flit_bytes=1024"});
  EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 89000u);
  EXPECT_EQ(link(*sys, "sw", "mem").flits, 4u);
}

TEST_F(LinkTiming, ZeroBandwidthMeansUnlimited) {
  auto sys = run(kOneHop, {"edges.0.bandwidth_gbs=0"});
  EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 2000u);
  EXPECT_EQ(sys->traffic(sys->simulation().elaboration()->links[0]).busy, 0u);
  EXPECT_EQ(sys->traffic(sys->simulation().elaboration()->links[0]).flits, 16u);
}

// --- distance ----------------------------------------------------------------------

TEST_F(LinkTiming, DistanceTimesNsPerMmIsThePropagationLatency) {
  // 20 mm x 0.15 ns/mm = 3 ns: 64 + 3 = 67 ns.
  const char* yaml = R"(
nodes:
  - { id: host, impl: builtin.endpoint, params: { send_to: mem, send_bytes: 4096 } }
  - { id: mem, impl: builtin.endpoint }
edges:
  - { src: host, dst: mem, bandwidth_gbs: 64, distance_mm: 20, ns_per_mm: 0.15 }
)";
  auto sys = run(yaml);
  EXPECT_EQ(sys->simulation().elaboration()->links[0].latency, ns(3));
  EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 67000u);
}

TEST_F(LinkTiming, DistanceUsesNsPerMmFromDefaultsAndKeepsFractions) {
  // 25 mm x 0.1 ns/mm = 2.5 ns: 64 + 2.5 = 66.5 ns.
  const char* yaml = R"(
defaults: { ns_per_mm: 0.1 }
nodes:
  - { id: host, impl: builtin.endpoint, params: { send_to: mem, send_bytes: 4096 } }
  - { id: mem, impl: builtin.endpoint }
edges:
  - { src: host, dst: mem, bandwidth_gbs: 64, distance_mm: 25 }
)";
  auto sys = run(yaml);
  EXPECT_EQ(sys->simulation().elaboration()->links[0].latency, 2500u);
  EXPECT_EQ(ps(*sys, "mem", "latency_min_ns"), 66500u);
}

}  // namespace
}  // namespace kbsim

namespace kbsim {
namespace {

// --- the kernel's contract with flit-aware components ---------------------------------

/// A flit-aware transit node that hands every flit to the link at absolute
/// time 0, i.e. in the past once time has moved on (Simulator::forward wants
/// `at` >= now).
class BackdatingForwarder : public Component {
 public:
  using Component::Component;
  static ComponentInfo info() {
    ComponentInfo i;
    i.type = "test_backdating_forwarder";
    i.summary = "forwards every flit with a hand-over time in the past";
    i.ports = {{"*", "any link"}};
    i.flit_aware = true;
    return i;
  }
  static Component* create(const ComponentContext& ctx) { return new BackdatingForwarder(ctx); }
  void on_flit(PortIndex, const Flit& flit) override { forward(flit.msg->route->ports[flit.hop], flit, 0); }
};

std::unique_ptr<core::Registry> registry_with_backdating_forwarder() {
  auto reg = test::builtin_registry();
  reg->add_component_type({BackdatingForwarder::info(), &BackdatingForwarder::create});
  reg->map_impl("test.backdating", "(in-process)", "test_backdating_forwarder", "test");
  return reg;
}

std::string backdating_line(int out_latency_ns) {
  return "nodes:\n"
         "  - { id: host, impl: builtin.endpoint, params: { send_to: mem, send_bytes: 0 } }\n"
         "  - { id: bad, impl: test.backdating }\n"
         "  - { id: mem, impl: builtin.endpoint }\n"
         "edges:\n"
         "  - { src: host, dst: bad, latency_ns: 10 }\n"
         "  - { src: bad, dst: mem, latency_ns: " +
         std::to_string(out_latency_ns) + " }\n";
}

TEST(KernelContract, ForwardInThePastIsASimErrorNamingTimeAndComponent) {
  // The control message reaches `bad` at 10 ns; it forwards with at = 0, so
  // the arrival it asks for (0 + 1 ns) lies before now. DESIGN §3: a
  // simulation error names the sim time and the component.
  auto reg = registry_with_backdating_forwarder();
  auto sys = test::build_system(*reg, backdating_line(1));
  try {
    sys->run();
    FAIL() << "expected a SimError";
  } catch (const SimError& e) {
    EXPECT_THAT(e.what(), ::testing::StartsWith("t=10 ns: bad: ")) << e.what();
  }
}

TEST(KernelContract, ForwardInThePastIsRejectedEvenIfTheArrivalIsStillAhead) {
  // Same, with 20 ns on bad->mem: the requested arrival (0 + 20 ns) is after
  // now (10 ns), so nothing in the engine objects, and the message would
  // arrive at 20 ns instead of 30: a hand-over in the past must be refused.
  auto reg = registry_with_backdating_forwarder();
  auto sys = test::build_system(*reg, backdating_line(20));
  try {
    sys->run();
    sys->finish();
    FAIL() << "expected a SimError; the message arrived at " << sys->stat("mem", "last_arrival_ns").value << " ns";
  } catch (const SimError& e) {
    EXPECT_THAT(e.what(), ::testing::StartsWith("t=10 ns: bad: ")) << e.what();
  }
}

}  // namespace
}  // namespace kbsim
