// Micro-benchmarks of the event engine: schedule + dispatch throughput with a
// given number of events in flight, and with many events per timestamp (the
// message-mesh shape) versus all-distinct timestamps. Reported as items/s.
#include <benchmark/benchmark.h>

#include "sim/engine.hpp"

namespace {

using kbsim::Tick;
using kbsim::core::Engine;
using kbsim::core::Event;

/// Each event re-schedules itself `step(i)` later, keeping `inflight` events pending.
class Bouncer final : public kbsim::core::EventTarget {
 public:
  explicit Bouncer(Engine& e, bool spread) : engine_(e), spread_(spread) {}
  Tick on_event(Event& ev) override {
    // spread: distinct times (a pseudo-random 1..1024 ps step); else every event 1 ns ahead.
    Tick step = spread_ ? 1 + ((ev.tag * 0x9E3779B97F4A7C15ULL) >> 54) : 1000;
    ++ev.tag;
    return engine_.now() + step;
  }

 private:
  Engine& engine_;
  bool spread_;
};

void run(benchmark::State& state, bool spread) {
  const auto inflight = static_cast<std::uint64_t>(state.range(0));
  const std::uint64_t per_iteration = 1 << 20;
  Engine engine;
  Bouncer target(engine, spread);
  for (std::uint64_t i = 0; i < inflight; ++i) {
    Event& ev = engine.schedule(spread ? i : 0, 128, {});
    ev.target = &target;
    ev.tag = i;
  }
  std::uint64_t done = 0;
  for (auto _ : state) {
    std::uint64_t goal = engine.events() + per_iteration;
    // Run in slices of simulated time until enough events have been processed.
    while (engine.events() < goal) engine.run_until(engine.now() + 1000 * 64);
    done += per_iteration;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(done));
}

void BM_SameTimestampBuckets(benchmark::State& state) { run(state, false); }
void BM_DistinctTimestamps(benchmark::State& state) { run(state, true); }

BENCHMARK(BM_SameTimestampBuckets)->Arg(256)->Arg(4096)->Arg(40000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DistinctTimestamps)->Arg(256)->Arg(4096)->Arg(40000)->Unit(benchmark::kMillisecond);

}  // namespace
