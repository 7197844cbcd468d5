// A system split over ranks (split/split.hpp), the ranks here being threads
// that talk through memory: the same statistics and event count as one process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <utility>

#include "harness.hpp"
#include "split/partition.hpp"
#include "split/split_executor.hpp"
#include "thread_transport.hpp"

namespace kbsim {
namespace {

/// An x-by-y torus of message-mesh nodes, 1 ns links, ports +x, -x, +y, -y; each node holds an event `delay`
/// before sending it on (its promise to split runs).
std::string torus(unsigned x, unsigned y, const std::string& delay = "0") {
  std::string t = "nodes:\n";
  auto id = [&](unsigned i, unsigned j) { return "n" + std::to_string(j * x + i); };
  for (unsigned k = 0; k < x * y; ++k)
    t += "  - { id: n" + std::to_string(k) + ", impl: builtin.mesh_node, params: { delay_ns: " + delay + " } }\n";
  t += "edges:\n";
  for (unsigned j = 0; j < y; ++j)
    for (unsigned i = 0; i < x; ++i)
      for (const auto& to : {id((i + 1) % x, j), id((i + x - 1) % x, j), id(i, (j + 1) % y), id(i, (j + y - 1) % y)})
        t += "  - { src: " + id(i, j) + ", dst: " + to + ", latency_ns: 1, kind: mesh }\n";
  return t;
}

/// Run `topology` for `ns` (0: to its end) in one process and split over 2, 3 and 4 ranks: every rank ends at the
/// same time with the event count, every statistic and every link's traffic of the one process.
void expect_split_runs_like_one(const std::string& topology, double ns) {
  const core::Registry& reg = test::shared_registry();
  auto serial = test::build_system(reg, topology);
  auto run = [ns](System& sim) { ns > 0 ? sim.run_until(ns_to_ticks(ns)) : sim.run(); };
  run(*serial);
  serial->finish();
  const auto& el = serial->simulation().elaboration();
  const std::vector<LinkUse> links = serial->link_use();
  for (unsigned ranks : {2u, 3u, 4u}) {
    const core::Partition part = core::partition(*el, ranks);
    std::vector<std::unique_ptr<core::SimulatedSystem>> sims(ranks);
    test::run_ranks(ranks, [&](unsigned r, test::ThreadTransport& net) {
      core::Split split{&part, r, &net};
      sims[r] = core::simulated(el, reg, nullptr, core::split_executor(split));
      run(*sims[r]);
      sims[r]->finish();
    });
    for (unsigned r = 0; r < ranks; ++r) {
      EXPECT_EQ(sims[r]->events(), serial->events()) << ranks << " ranks, rank " << r;
      EXPECT_EQ(sims[r]->now(), serial->now()) << ranks << " ranks, rank " << r;
      for (NodeIndex n = 0; n < el->nodes.size(); ++n) {
        const auto want = serial->stats_of(n);
        const auto got = sims[r]->stats_of(n);
        for (std::size_t k = 0; k < want.size(); ++k) {
          ASSERT_EQ(got[k].count, want[k].count) << ranks << " ranks, rank " << r << ", " << el->nodes[n].id;
          ASSERT_EQ(got[k].value, want[k].value) << ranks << " ranks, rank " << r << ", " << el->nodes[n].id;
        }
      }
      const std::vector<LinkUse> got = sims[r]->link_use();
      ASSERT_EQ(got.size(), links.size());
      for (std::size_t k = 0; k < links.size(); ++k) {
        EXPECT_EQ(got[k].bytes, links[k].bytes) << links[k].src << " -> " << links[k].dst;
        EXPECT_EQ(got[k].busy_ns, links[k].busy_ns) << links[k].src << " -> " << links[k].dst;
      }
    }
  }
}

TEST(Split, AMeshOverTwoToFourRanksGivesTheStatisticsOfOneProcess) { expect_split_runs_like_one(torus(6, 6), 200.0); }

TEST(Split, ASendersPromisedDelayWidensTheWindowsAndTheRunIsStillOneProcesssRun) {
  // Nodes promising 2.5 ns over 1 ns links: windows of 3.5 ns, each holding several instants of the mesh.
  auto sys = test::build_system(test::shared_registry(), torus(6, 6, "2.5"));
  EXPECT_EQ(core::partition(*sys->simulation().elaboration(), 2).lookahead, ns_to_ticks(3.5));
  expect_split_runs_like_one(torus(6, 6, "2.5"), 200.0);
}

struct Ball final : Message {
  static constexpr std::string_view kName = "test.split.Ball";
  static constexpr TypeId kType = type_id(kName);
  Ball() : Message(kType) {}
  void save(ByteWriter&) const override {}
  void load(ByteReader&) override {}
};

/// A mesh node that promises more than it keeps: it says it holds what it receives for `promise_ns`, and sends it
/// on after `actual_ns`.
class Liar final : public Component {
 public:
  static constexpr FloatParam kPromise{"promise_ns", 2.0, "what it promises"};
  static constexpr FloatParam kActual{"actual_ns", 0.5, "what it does"};
  explicit Liar(const ComponentContext& c) : Component(c), actual_(ns_to_ticks(params().get(kActual))) {}
  static ComponentInfo info() {
    ComponentInfo i;
    i.type = "test_liar";
    i.summary = "promises a send delay it does not keep";
    i.params = {kPromise, kActual};
    i.ports = {{"mesh", "to the other"}};
    i.send_delay_param = kPromise.name;
    return i;
  }
  void setup() override { send(0, make_message<Ball>(), ns_to_ticks(params().get(kPromise))); }
  void on_message(PortIndex, Ref<Message> msg) override { send(0, std::move(msg), actual_); }

 private:
  Tick actual_;
};

TEST(Split, APromiseMustNameAFloatParameterOfTheComponent) {
  auto reg = test::builtin_registry();
  ComponentType t{Liar::info(), [](const ComponentContext& c) -> Component* { return new Liar(c); }};
  t.info.send_delay_param = "promise";
  try {
    reg->add_component_type(t, "liar.so");
    FAIL() << "a promise in a parameter it does not have";
  } catch (const PluginError& e) {
    EXPECT_STREQ(e.what(),
                 "liar.so: component type 'test_liar' promises its send delay in parameter 'promise', which "
                 "it does not declare (ComponentInfo::send_delay_param names one of its params)");
  }
}

TEST(Split, ASenderThatBreaksItsPromiseAcrossRanksIsAnErrorNamingIt) {
  auto reg = test::builtin_registry();
  reg->add_component_type({Liar::info(), [](const ComponentContext& c) -> Component* { return new Liar(c); }});
  reg->map_impl("test.liar", "(in-process)", "test_liar", "test");
  reg->add_message_type({Ball::kName, Ball::kType, []() -> Ref<Message> { return make_message<Ball>(); }});
  const std::string pair =
      "nodes:\n  - { id: a, impl: test.liar }\n  - { id: b, impl: test.liar }\n"
      "edges:\n  - { src: a, dst: b, latency_ns: 1, kind: mesh, bidir: true }\n";
  auto serial = test::build_system(*reg, pair);
  serial->run_until(ns_to_ticks(20.0));  // in one process nothing depends on the promise
  const auto& el = serial->simulation().elaboration();
  const core::Partition part = core::partition(*el, 2);
  EXPECT_EQ(part.lookahead, ns_to_ticks(3.0));
  std::vector<std::string> ended(2);
  test::run_ranks(2, [&](unsigned r, test::ThreadTransport& net) {
    core::Split split{&part, r, &net};
    core::Simulation sim(el, *reg, nullptr, core::split_executor(split));
    try {
      sim.system().run_until(ns_to_ticks(20.0));
    } catch (const Error& e) {
      ended[r] = e.what();
      core::leave_split(net, r, 2, e.code(), e.what(), true);
    }
  });
  // Each one's ball reaches the other at 3 ns, and its answer, leaving at 3.5 ns, would arrive 1.5 ns after it acted:
  // the lower rank's error ends both.
  for (const std::string& e : ended)
    EXPECT_THAT(e, ::testing::HasSubstr(
                       "rank 0 of 2: t=3 ns: a: sends a message to b, on another rank of this split run, arriving 1.5 "
                       "ns after it acted; but its type 'test_liar' (test.liar, library (in-process)) promises "
                       "(parameter 'promise_ns' = 2 ns) to "
                       "send nothing sooner than that after it acts, so over this 1 ns link it must arrive at least "
                       "3 ns later"));
}

/// Two endpoints at each end of a chain of six routers (builtin.forwarding, flit by flit), all sending multi-flit
/// packets across it both ways: the cuts fall between an endpoint and a router (a train of flits crosses), between
/// routers (single flits) and between a router and an endpoint (the whole message, at its last flit).
std::string router_chain() {
  std::string t = "nodes:\n";
  auto ep = [&](const std::string& id, const std::string& to, int bytes, double start) {
    t += "  - { id: " + id + ", impl: builtin.endpoint, params: { send_to: " + to +
         ", send_bytes: " + std::to_string(bytes) + ", count: 6, start_ns: " + std::to_string(start) +
         ", interval_ns: 7 } }\n";
  };
  ep("a0", "b1", 1000, 0);
  ep("a1", "b0", 300, 2);
  for (int k = 0; k < 6; ++k)
    t += "  - { id: r" + std::to_string(k) + ", impl: builtin.forwarding, params: { overhead_ns: 2 } }\n";
  ep("b0", "a0", 700, 1);
  ep("b1", "a1", 0, 3);
  t += "edges:\n";
  auto both = [&](const std::string& x, const std::string& y, double ns) {
    for (const auto& [s, d] : {std::pair{x, y}, std::pair{y, x}})
      t += "  - { src: " + s + ", dst: " + d + ", latency_ns: " + std::to_string(ns) +
           ", bandwidth_gbs: 32, flit_bytes: 64 }\n";
  };
  both("a0", "r0", 1);
  both("a1", "r0", 1.5);
  for (int k = 0; k + 1 < 6; ++k) both("r" + std::to_string(k), "r" + std::to_string(k + 1), 0.5 + 0.25 * k);
  both("r5", "b0", 1);
  both("r5", "b1", 2);
  return t;
}

TEST(Split, RoutedPacketsCrossingAsFlitsGiveTheStatisticsOfOneProcess) {
  auto serial = test::build_system(test::shared_registry(), router_chain());
  serial->run();
  for (const char* sink : {"a0", "a1", "b0", "b1"}) ASSERT_EQ(serial->stat(sink, "received").count, 6u) << sink;
  expect_split_runs_like_one(router_chain(), 0);      // to the end: every rank ends at the last event of any
  expect_split_runs_like_one(router_chain(), 100.0);  // a part of it, with flits on their way at its end
}

TEST(Split, ARankThatEndsWithAnErrorEndsTheOthersMidRunAndNoneWaitsForever) {
  // Rank 1 fails before it runs (in its bench, say) and leaves; rank 0, running its part, ends at its next exchange
  // with rank 1's error, and leaves too. Then the reverse: rank 0 leaves without an error while rank 1 still runs.
  const core::Registry& reg = test::shared_registry();
  auto serial = test::build_system(reg, torus(4, 4));
  const auto& el = serial->simulation().elaboration();
  const core::Partition part = core::partition(*el, 2);
  for (unsigned leaver : {1u, 0u}) {
    const bool failed = leaver == 1;
    std::string ended;
    std::optional<core::RankError> told;
    test::run_ranks(2, [&](unsigned r, test::ThreadTransport& net) {
      if (r == leaver) {
        told = core::leave_split(net, r, 2, failed ? ExitCode::kBench : ExitCode::kOk, failed ? "it broke" : "", false);
        return;
      }
      core::Split split{&part, r, &net};
      core::Simulation sim(el, reg, nullptr, core::split_executor(split));
      try {
        sim.system().run_until(ns_to_ticks(100.0));
      } catch (const Error& e) {
        ended = e.what();
        core::leave_split(net, r, 2, e.code(), e.what(), true);
      }
    });
    if (failed) {
      EXPECT_EQ(ended, "rank 1 of 2: it broke");
      EXPECT_FALSE(told) << "the rank that failed gets no other's error";
    } else {
      EXPECT_THAT(ended, ::testing::HasSubstr("rank 1 of 2: the ranks' benches went different ways: rank 0 finished "
                                              "its bench while this one runs its system"));
      ASSERT_TRUE(told);
      EXPECT_THAT(told->what(), ::testing::HasSubstr("rank 1 of 2: the ranks' benches went different ways"));
    }
  }
}

}  // namespace
}  // namespace kbsim
