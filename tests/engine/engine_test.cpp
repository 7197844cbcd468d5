// The event engine: ordering by (time, priority, insertion sequence), cancel,
// run_until, stop, re-arming, and no heap allocation per event in steady state.
#include "sim/engine.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <set>
#include <tuple>
#include <vector>

#include "harness.hpp"

// ---------------------------------------------------------------------------
// Allocation counting. Replacing the global operator new/delete is
// program-wide, so it counts only while a scope enables it. AddressSanitizer
// brings its own operator new (with checks we want to keep), so under ASan the
// replacement is left out and the allocation tests skip.
#if defined(__SANITIZE_ADDRESS__)
#define KBSIM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KBSIM_TEST_ASAN 1
#endif
#endif

namespace {
std::atomic<bool> g_count_allocations{false};
std::atomic<std::uint64_t> g_allocations{0};

#if !defined(KBSIM_TEST_ASAN)
void* counted_alloc(std::size_t n) {
  if (g_count_allocations.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* counted_aligned_alloc(std::size_t n, std::align_val_t al) {
  if (g_count_allocations.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  auto a = static_cast<std::size_t>(al);
  if (a < sizeof(void*)) a = sizeof(void*);
  std::size_t size = (n + a - 1) / a * a;
  if (void* p = std::aligned_alloc(a, size ? size : a)) return p;
  throw std::bad_alloc();
}
#endif
}  // namespace

#if !defined(KBSIM_TEST_ASAN)
void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void* operator new(std::size_t n, std::align_val_t al) { return counted_aligned_alloc(n, al); }
void* operator new[](std::size_t n, std::align_val_t al) { return counted_aligned_alloc(n, al); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
#endif

namespace kbsim {
namespace {

using core::Engine;
using core::Event;
using core::EventTarget;

/// Counts heap allocations made while it is alive.
class AllocationScope {
 public:
  AllocationScope() {
    g_allocations.store(0);
    g_count_allocations.store(true);
  }
  ~AllocationScope() { g_count_allocations.store(false); }
  AllocationScope(const AllocationScope&) = delete;
  AllocationScope& operator=(const AllocationScope&) = delete;
  std::uint64_t allocations() const { return g_allocations.load(); }
};

constexpr Tick ns(Tick n) { return n * kPsPerNs; }

int* volatile g_sink = nullptr;

/// Records (now, tag) of every event it receives.
struct Recorder final : EventTarget {
  explicit Recorder(Engine& e) : engine(e) {}
  Tick on_event(Event& ev) override {
    log.emplace_back(engine.now(), ev.tag);
    return kNever;
  }
  Engine& engine;
  std::vector<std::pair<Tick, std::uint64_t>> log;
};

using Log = std::vector<std::pair<Tick, std::uint64_t>>;
using kbsim::core::Order;

void at(Engine& e, EventTarget& target, Tick t, std::uint8_t priority, std::uint64_t tag, EventId* id = nullptr,
        Order order = {}) {
  Event& ev = e.schedule(t, priority, order, id);
  ev.target = &target;
  ev.tag = tag;
}

/// A small deterministic generator (the tests must not depend on std::rand).
struct Lcg {
  std::uint64_t s;
  std::uint64_t next() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return s >> 33;
  }
  std::uint64_t below(std::uint64_t n) { return next() % n; }
};

/// Logs `self` when it runs, then schedules `spawns` (priority, tag, order) for the recorder at the current time.
struct Spawner final : EventTarget {
  Spawner(Engine& en, Recorder& rec, std::uint64_t id, std::vector<std::tuple<std::uint8_t, std::uint64_t, Order>> s)
      : e(en), r(rec), self(id), spawns(std::move(s)) {}
  Tick on_event(Event&) override {
    r.log.emplace_back(e.now(), self);
    for (const auto& [p, tag, order] : spawns) at(e, r, e.now(), p, tag, nullptr, order);
    return kNever;
  }
  Engine& e;
  Recorder& r;
  std::uint64_t self;
  std::vector<std::tuple<std::uint8_t, std::uint64_t, Order>> spawns;
};

// --- ordering ---------------------------------------------------------------

TEST(Engine, RunsEventsInTimeOrderWhateverTheSchedulingOrder) {
  Engine e;
  Recorder r(e);
  at(e, r, ns(30), 128, 3);
  at(e, r, ns(10), 128, 1);
  at(e, r, 5, 128, 0);  // 5 ps
  at(e, r, ns(20), 128, 2);
  e.run_until(kNever);
  EXPECT_EQ(r.log, (Log{{5, 0}, {ns(10), 1}, {ns(20), 2}, {ns(30), 3}}));
}

TEST(Engine, AtEqualTimesLowerPriorityRunsFirst) {
  Engine e;
  Recorder r(e);
  at(e, r, ns(1), 200, 200);
  at(e, r, ns(1), 0, 0);
  at(e, r, ns(1), 128, 128);
  at(e, r, ns(1), 255, 255);
  at(e, r, ns(1), 1, 1);
  e.run_until(kNever);
  EXPECT_EQ(r.log, (Log{{ns(1), 0}, {ns(1), 1}, {ns(1), 128}, {ns(1), 200}, {ns(1), 255}}));
}

TEST(Engine, AtEqualTimeAndPriorityRunsInInsertionOrder) {
  Engine e;
  Recorder r(e);
  Log want;
  for (std::uint64_t i = 0; i < 3000; ++i) {  // more than one chunk of event slots
    at(e, r, ns(7), 9, i);
    want.emplace_back(ns(7), i);
  }
  e.run_until(kNever);
  EXPECT_EQ(r.log, want);
}

TEST(Engine, TimeBeatsPriorityAndPriorityBeatsInsertionOrder) {
  Engine e;
  Recorder r(e);
  at(e, r, ns(2), 0, 20);   // later time, lowest priority: still after every t=1 event
  at(e, r, ns(1), 50, 11);  // inserted before tag 10 but higher priority value
  at(e, r, ns(1), 10, 10);
  at(e, r, ns(1), 50, 12);  // same key as tag 11, inserted after it
  e.run_until(kNever);
  EXPECT_EQ(r.log, (Log{{ns(1), 10}, {ns(1), 11}, {ns(1), 12}, {ns(2), 20}}));
}

TEST(Engine, AtEqualTimeAndPriorityTheLowerRootRunsFirstThenTheLowerLane) {
  Engine e;
  Recorder r(e);
  at(e, r, ns(4), 7, 0, nullptr, {2, 0});
  at(e, r, ns(4), 7, 1, nullptr, {1, 9});
  at(e, r, ns(4), 7, 2, nullptr, {1, 3});
  at(e, r, ns(4), 7, 3, nullptr, {0, 5});
  e.run_until(kNever);
  EXPECT_EQ(r.log, (Log{{ns(4), 3}, {ns(4), 2}, {ns(4), 1}, {ns(4), 0}}));
}

TEST(Engine, AtEqualTimeAndPriorityTheLowerLaneRunsFirstAndOneLaneKeepsInsertionOrder) {
  Engine e;
  Recorder r(e);
  const std::uint32_t lanes[] = {5, 2, 5, 0, 2, 300, 2};
  for (std::uint64_t i = 0; i < 7; ++i) at(e, r, ns(4), 7, i, nullptr, {0, lanes[i]});
  at(e, r, ns(4), 6, 100, nullptr, {0, 999});  // a lower priority value still comes first, whatever its lane
  e.run_until(kNever);
  EXPECT_EQ(r.log,
            (Log{{ns(4), 100}, {ns(4), 3}, {ns(4), 1}, {ns(4), 4}, {ns(4), 6}, {ns(4), 0}, {ns(4), 2}, {ns(4), 5}}));
}

TEST(Engine, ManyEventsInLanesScheduledOutOfOrderComeOutByLaneThenInsertion) {
  // Thousands at one time, scheduled out of order: many runs, joined by the front's sort; lanes differ in every byte.
  Engine e;
  Recorder r(e);
  Lcg rng{5};
  std::vector<std::tuple<std::uint32_t, std::uint64_t>> want;
  for (std::uint64_t i = 0; i < 5000; ++i) {
    const auto lane = static_cast<std::uint32_t>(rng.next() % 7 == 0 ? rng.next() : rng.below(40));
    at(e, r, ns(2), 128, i, nullptr, {0, lane});
    want.emplace_back(lane, i);
  }
  std::sort(want.begin(), want.end());
  e.run_until(kNever);
  ASSERT_EQ(r.log.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) ASSERT_EQ(r.log[k].second, std::get<1>(want[k])) << "at " << k;
}

TEST(Engine, AnEventAtTheCurrentTimeTakesItsPlaceByLane) {
  // Pending at 3 ns: lanes 1, 3 and 5. The lane-1 event adds lanes 4, 0, 9 and 3 at the current time: 4 runs
  // between 3 and 5, 0 (lower than any left) next, 9 last, and the new 3 after the pending 3.
  Engine e;
  Recorder r(e);
  Spawner s(e, r, 1, {{5, 40, {0, 4}}, {5, 0, {0, 0}}, {5, 90, {0, 9}}, {5, 31, {0, 3}}});
  Event& ev = e.schedule(ns(3), 5, {0, 1});
  ev.target = &s;
  at(e, r, ns(3), 5, 50, nullptr, {0, 5});
  at(e, r, ns(3), 5, 30, nullptr, {0, 3});
  e.run_until(kNever);
  EXPECT_EQ(r.log, (Log{{ns(3), 1}, {ns(3), 0}, {ns(3), 30}, {ns(3), 31}, {ns(3), 40}, {ns(3), 50}, {ns(3), 90}}));
}

TEST(Engine, AnEventAtTheCurrentTimeJoinsTheEndOfAnOlderRunLeftAlone) {
  // Two runs at 3 ns: lanes 5, 6, 7, then (newer, out of order) lane 1. They are taken as they come, without joining
  // them; lane 1 runs and its run is gone. The lane-5 event then adds lane 9 at the current time: it goes after 7,
  // the last event of the older run (found by a walk: the table of open runs knows only the newer run's end).
  Engine e;
  Recorder r(e);
  Spawner s(e, r, 5, {{5, 90, {0, 9}}});
  Event& ev = e.schedule(ns(3), 5, {0, 5});
  ev.target = &s;
  at(e, r, ns(3), 5, 6, nullptr, {0, 6});
  at(e, r, ns(3), 5, 7, nullptr, {0, 7});
  at(e, r, ns(3), 5, 1, nullptr, {0, 1});
  e.run_until(kNever);
  EXPECT_EQ(r.log, (Log{{ns(3), 1}, {ns(3), 5}, {ns(3), 6}, {ns(3), 7}, {ns(3), 90}}));
}

TEST(Engine, FourRunsOfOneInstantTakenAsTheyComeGiveTiesToTheOlderRun) {
  // Four runs at 3 ns (each starts with a lane lower than the last one scheduled): A = 2, 5, 8; B = 1, 5, 6;
  // C = 0, 3; D = 2, 9. They are taken as they come, without joining them: each event is the least first event,
  // the older run's on equal lanes (A's 2 before D's, A's 5 before B's), and C, a run in the middle, is spent first.
  Engine e;
  Recorder r(e);
  for (const auto& [lane, tag] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
           {2, 20}, {5, 50}, {8, 80}, {1, 11}, {5, 51}, {6, 61}, {0, 1}, {3, 31}, {2, 22}, {9, 92}})
    at(e, r, ns(3), 5, tag, nullptr, {0, lane});
  e.run_until(kNever);
  Log want;
  for (std::uint64_t tag : {1, 11, 20, 22, 31, 50, 51, 61, 80, 92}) want.emplace_back(ns(3), tag);
  EXPECT_EQ(r.log, want);
}

TEST(Engine, ManyDistinctKeysInRandomOrderComeOutSorted) {
  // Thousands of (time, priority) buckets: exercises growth of the bucket
  // table and of the heap, and deletion from the table.
  Engine e;
  Recorder r(e);
  Lcg rng{42};
  std::vector<std::tuple<Tick, unsigned, std::uint64_t>> want;
  for (std::uint64_t i = 0; i < 20000; ++i) {
    Tick t = rng.below(5000) * 7;  // collisions on time are frequent
    auto p = static_cast<std::uint8_t>(rng.below(4));
    at(e, r, t, p, i);
    want.emplace_back(t, p, i);
  }
  std::sort(want.begin(), want.end());
  e.run_until(kNever);
  ASSERT_EQ(r.log.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(r.log[k].first, std::get<0>(want[k])) << "at position " << k;
    ASSERT_EQ(r.log[k].second, std::get<2>(want[k])) << "at position " << k;
  }
}

TEST(Engine, TimesAcrossEveryLevelOfTheQueueComeOutInOrderBetweenSlicedRuns) {
  // Times from picoseconds to minutes apart (every byte level of the radix queue), scheduled in slices between
  // run_until calls whose limits often stop short of the next pending event: what the host runtime does when it
  // issues work between waits. Compared against an ordered set of (time, priority, sequence) run the same way.
  Engine e;
  Recorder r(e);
  Lcg rng{9};
  std::set<std::tuple<Tick, unsigned, std::uint64_t>> model;
  Log want;
  std::uint64_t tag = 0;
  for (int slice = 0; slice < 200; ++slice) {
    for (int k = 0; k < 50; ++k) {
      const unsigned shift = static_cast<unsigned>(rng.below(48));  // spreads of 1 ps .. 2^47 ps
      const Tick t = e.now() + (rng.below(3) == 0 ? 0 : rng.next() & ((Tick{1} << shift) - 1));
      const auto p = static_cast<std::uint8_t>(rng.below(3));
      at(e, r, t, p, tag);
      model.insert({t, p, tag++});
    }
    const Tick limit = e.now() + rng.below(Tick{1} << rng.below(40));
    e.run_until(limit);
    while (!model.empty() && std::get<0>(*model.begin()) <= limit) {
      want.emplace_back(std::get<0>(*model.begin()), std::get<2>(*model.begin()));
      model.erase(model.begin());
    }
    ASSERT_EQ(e.now(), limit);
  }
  e.run_until(kNever);
  for (const auto& [t, p, id] : model) want.emplace_back(t, id);
  ASSERT_EQ(r.log.size(), want.size());
  EXPECT_TRUE(r.log == want);
  EXPECT_TRUE(e.empty());
}

/// Handlers that schedule and cancel at random, with three roots and four lanes, compared against a plain
/// ordered-set model of (time, priority, root, lane, sequence).
class RandomWorkload final : public EventTarget {
 public:
  RandomWorkload(Engine& e, std::uint64_t seed, std::uint64_t budget) : e_(e), rng_{seed}, budget_(budget) {}

  void start() {
    for (int i = 0; i < 50; ++i) {
      Tick t = rng_.below(20) * 100;
      add(t, static_cast<std::uint8_t>(rng_.below(3)));
    }
  }
  Tick on_event(Event& ev) override {
    log.emplace_back(e_.now(), ev.tag);
    react();
    return kNever;
  }
  Log log;

 private:
  void react() {
    if (next_tag_ >= budget_) return;
    std::uint64_t n = rng_.below(4);  // 0..3 new events: the queue grows until the budget is spent
    for (std::uint64_t k = 0; k < n; ++k) {
      Tick t = e_.now() + rng_.below(5) * 100;  // delay 0 included
      add(t, static_cast<std::uint8_t>(rng_.below(3)));
    }
    if (rng_.below(4) == 0) e_.cancel(ids_[rng_.below(ids_.size())]);  // pending, done or cancelled
  }
  void add(Tick t, std::uint8_t p) {
    EventId id;
    const auto root = static_cast<std::uint32_t>(rng_.below(3));
    at(e_, *this, t, p, next_tag_++, &id, {root, rng_.below(4)});
    ids_.push_back(id);
  }
  Engine& e_;
  Lcg rng_;
  std::uint64_t budget_;
  std::uint64_t next_tag_ = 0;
  std::vector<EventId> ids_;
};

/// The same decisions as RandomWorkload, on a std::set.
Log reference_run(std::uint64_t seed, std::uint64_t budget, std::uint64_t* ran) {
  Lcg rng{seed};
  std::set<std::tuple<Tick, unsigned, std::uint64_t, std::uint64_t>> queue;
  std::vector<std::tuple<Tick, unsigned, std::uint64_t, std::uint64_t>> keys;
  std::uint64_t next_tag = 0;
  auto add = [&](Tick t, unsigned p) {
    const std::uint64_t root = rng.below(3);
    const std::uint64_t lane = rng.below(4);
    queue.insert({t, p, root << 32 | lane, next_tag});
    keys.emplace_back(t, p, root << 32 | lane, next_tag);
    ++next_tag;
  };
  for (int i = 0; i < 50; ++i) {
    Tick t0 = rng.below(20) * 100;
    add(t0, static_cast<unsigned>(rng.below(3)));
  }
  Log log;
  while (!queue.empty()) {
    auto [t, p, lane, tag] = *queue.begin();
    queue.erase(queue.begin());
    log.emplace_back(t, tag);
    if (next_tag >= budget) continue;
    std::uint64_t n = rng.below(4);
    for (std::uint64_t k = 0; k < n; ++k) {
      Tick t1 = t + rng.below(5) * 100;
      add(t1, static_cast<unsigned>(rng.below(3)));
    }
    if (rng.below(4) == 0) queue.erase(keys[rng.below(keys.size())]);
  }
  *ran = log.size();
  return log;
}

TEST(Engine, RandomScheduleAndCancelMatchesAnOrderedSetModel) {
  for (std::uint64_t seed : {1u, 2u, 3u, 77u}) {
    Engine e;
    RandomWorkload w(e, seed, 20000);
    w.start();
    e.run_until(kNever);
    std::uint64_t ran = 0;
    Log want = reference_run(seed, 20000, &ran);
    ASSERT_EQ(w.log.size(), want.size()) << "seed " << seed;
    EXPECT_TRUE(w.log == want) << "seed " << seed;
    EXPECT_EQ(e.events(), ran) << "seed " << seed;
    EXPECT_TRUE(e.empty());
  }
}

TEST(Engine, EventScheduledAtTheCurrentTimeRunsAfterThoseAlreadyQueued) {
  Engine e;
  Recorder r(e);
  // Same time and priority: behind tag 2. Same time, lower priority value: next, before tag 2.
  Spawner s(e, r, 100, {{5, 101, {}}, {1, 102, {}}});
  Event& ev = e.schedule(ns(3), 5, {});
  ev.target = &s;
  at(e, r, ns(3), 5, 2);
  e.run_until(kNever);
  EXPECT_EQ(r.log, (Log{{ns(3), 100}, {ns(3), 102}, {ns(3), 2}, {ns(3), 101}}));
}

// --- cancel -----------------------------------------------------------------

TEST(Engine, AfterARunEndingOnCancelledEventsLaterOnesStillComeInOrder) {
  // The run ends on a cancelled event at 10 ns while now() stays at 1 ns; events then scheduled on both sides of
  // 10 ns must still run in time order.
  Engine e;
  Recorder r(e);
  at(e, r, ns(1), 128, 1);
  EventId cancelled;
  at(e, r, ns(10), 128, 99, &cancelled);
  e.cancel(cancelled);
  e.run_until(kNever);
  EXPECT_EQ(e.now(), ns(1));
  at(e, r, ns(10), 128, 2);
  at(e, r, ns(2), 128, 3);
  at(e, r, 0x1FF + ns(1), 128, 4);
  e.run_until(kNever);
  EXPECT_EQ(r.log, (Log{{ns(1), 1}, {0x1FF + ns(1), 4}, {ns(2), 3}, {ns(10), 2}}));
}

TEST(Engine, CancelledEventDoesNotRunAndIsNotCounted) {
  Engine e;
  Recorder r(e);
  EventId a, b, c;
  at(e, r, ns(1), 128, 1, &a);
  at(e, r, ns(1), 128, 2, &b);
  at(e, r, ns(2), 128, 3, &c);
  e.cancel(b);
  e.cancel(c);
  e.cancel(c);  // twice is harmless
  e.run_until(kNever);
  EXPECT_EQ(r.log, (Log{{ns(1), 1}}));
  EXPECT_EQ(e.events(), 1u);
  EXPECT_EQ(e.now(), ns(1)) << "a cancelled event does not advance time";
  EXPECT_TRUE(e.empty());
}

TEST(Engine, StaleIdAfterTheEventRanIsIgnoredEvenWhenItsSlotIsReused) {
  Engine e;
  Recorder r(e);
  EventId first;
  at(e, r, ns(1), 128, 1, &first);
  e.run_until(kNever);
  // The freed slot is reused by the next event; the old id must not touch it.
  EventId second;
  at(e, r, ns(2), 128, 2, &second);
  EXPECT_EQ(second.slot, first.slot) << "the test wants slot reuse (free list is LIFO)";
  e.cancel(first);
  e.cancel(EventId{});  // a default id is ignored too
  e.run_until(kNever);
  EXPECT_EQ(r.log, (Log{{ns(1), 1}, {ns(2), 2}}));
  EXPECT_EQ(e.events(), 2u);
}

TEST(Engine, StaleIdOfACancelledEventDoesNotCancelTheSlotsNextUser) {
  Engine e;
  Recorder r(e);
  EventId a;
  at(e, r, ns(1), 128, 1, &a);
  e.cancel(a);
  e.run_until(kNever);  // drops the cancelled body, freeing its slot
  EventId b;
  at(e, r, ns(2), 128, 2, &b);
  EXPECT_EQ(b.slot, a.slot);
  e.cancel(a);
  e.run_until(kNever);
  EXPECT_EQ(r.log, (Log{{ns(2), 2}}));
  EXPECT_EQ(e.events(), 1u);
}

// --- run_until, stop, events ------------------------------------------------

TEST(Engine, RunUntilRunsEventsAtExactlyTheLimitAndLeavesLaterOnes) {
  Engine e;
  Recorder r(e);
  at(e, r, ns(5), 128, 1);
  at(e, r, ns(10), 200, 2);
  at(e, r, ns(10) + 1, 0, 3);  // one picosecond later
  at(e, r, ns(20), 128, 4);
  e.run_until(ns(10));
  EXPECT_EQ(r.log, (Log{{ns(5), 1}, {ns(10), 2}}));
  EXPECT_EQ(e.now(), ns(10));
  EXPECT_EQ(e.events(), 2u);
  EXPECT_FALSE(e.empty());

  e.run_until(ns(15));  // runs tag 3; now() is the limit, not the last event's time
  EXPECT_EQ(r.log.back(), (std::pair<Tick, std::uint64_t>{ns(10) + 1, 3}));
  EXPECT_EQ(e.now(), ns(15));

  e.run_until(kNever);
  EXPECT_EQ(r.log.back(), (std::pair<Tick, std::uint64_t>{ns(20), 4}));
  EXPECT_EQ(e.now(), ns(20)) << "run_until(kNever) leaves now() at the last event";
  EXPECT_EQ(e.events(), 4u);
  EXPECT_TRUE(e.empty());
}

TEST(Engine, RunUntilOnAnEmptyQueueAdvancesTime) {
  Engine e;
  e.run_until(ns(123));
  EXPECT_EQ(e.now(), ns(123));
  EXPECT_EQ(e.events(), 0u);
  e.run_until(kNever);
  EXPECT_EQ(e.now(), ns(123));
}

TEST(Engine, SchedulingInThePastThrowsSimError) {
  Engine e;
  e.run_until(ns(100));
  EXPECT_THROW(e.schedule(ns(100) - 1, 128, {}), SimError);
  Recorder r(e);
  EXPECT_NO_THROW(at(e, r, ns(100), 128, 1));  // the present is fine
  e.run_until(kNever);
  EXPECT_EQ(r.log, (Log{{ns(100), 1}}));
}

TEST(Engine, StopFromAHandlerReturnsAfterThatEvent) {
  Engine e;
  struct Stopper final : EventTarget {
    Engine& e;
    Log log;
    explicit Stopper(Engine& en) : e(en) {}
    Tick on_event(Event& ev) override {
      log.emplace_back(e.now(), ev.tag);
      if (ev.tag == 2) e.stop();
      return kNever;
    }
  } s(e);
  at(e, s, ns(1), 128, 1);
  at(e, s, ns(2), 128, 2);
  at(e, s, ns(2), 128, 3);  // same time, but after the stop
  at(e, s, ns(3), 128, 4);
  EXPECT_TRUE(e.run_until(ns(50))) << "the run reports that it was stopped";
  EXPECT_EQ(s.log, (Log{{ns(1), 1}, {ns(2), 2}}));
  EXPECT_EQ(e.now(), ns(2)) << "a stopped run does not jump to the limit";
  EXPECT_EQ(e.events(), 2u);

  EXPECT_FALSE(e.run_until(kNever)) << "resumes where it stopped and runs to the end";
  EXPECT_EQ(s.log, (Log{{ns(1), 1}, {ns(2), 2}, {ns(2), 3}, {ns(3), 4}}));
  EXPECT_EQ(e.events(), 4u);
}

// --- re-arming ----------------------------------------------------------------

TEST(Engine, ReArmingFiresTheSameEventAgainAtTheReturnedTime) {
  Engine e;
  struct Train final : EventTarget {
    Engine& e;
    Log log;
    explicit Train(Engine& en) : e(en) {}
    Tick on_event(Event& ev) override {
      log.emplace_back(e.now(), ev.index);
      ++ev.index;  // the body persists between firings
      return ev.index < 4 ? e.now() + ns(10) : kNever;
    }
  } t(e);
  Event& ev = e.schedule(ns(1), 128, {});
  ev.target = &t;
  ev.index = 0;
  e.run_until(kNever);
  EXPECT_EQ(t.log, (Log{{ns(1), 0}, {ns(11), 1}, {ns(21), 2}, {ns(31), 3}}));
  EXPECT_EQ(e.events(), 4u);
  EXPECT_TRUE(e.empty());
}

TEST(Engine, ReArmedEventKeepsItsPriorityAndQueuesBehindItsKey) {
  Engine e;
  struct Log2 final : EventTarget {
    Engine& e;
    Log log;
    explicit Log2(Engine& en) : e(en) {}
    Tick on_event(Event& ev) override {
      log.emplace_back(e.now(), ev.tag);
      if (ev.tag == 1 && ev.count++ == 0) return ns(5);  // re-arm once, to t=5 at priority 10
      return kNever;
    }
  } t(e);
  at(e, t, ns(1), 10, 1);
  at(e, t, ns(5), 10, 2);  // same key as the re-armed event, queued earlier: runs first
  at(e, t, ns(5), 9, 3);   // lower priority value: before both
  at(e, t, ns(5), 11, 4);  // higher priority value: after both
  e.run_until(kNever);
  EXPECT_EQ(t.log, (Log{{ns(1), 1}, {ns(5), 3}, {ns(5), 2}, {ns(5), 1}, {ns(5), 4}}));
}

TEST(Engine, CancellingARearmingEventStopsItBetweenFirings) {
  Engine e;
  struct Clock final : EventTarget {
    Engine& e;
    std::vector<Tick> ticks;
    explicit Clock(Engine& en) : e(en) {}
    Tick on_event(Event&) override {
      ticks.push_back(e.now());
      return e.now() + ns(10);  // forever
    }
  } c(e);
  EventId id;
  Event& ev = e.schedule(0, 128, {}, &id);
  ev.target = &c;
  e.run_until(ns(35));
  EXPECT_EQ(c.ticks, (std::vector<Tick>{0, ns(10), ns(20), ns(30)}));
  e.cancel(id);  // the id stays valid while the event keeps re-arming
  e.run_until(kNever);
  EXPECT_EQ(c.ticks.size(), 4u);
  EXPECT_EQ(e.events(), 4u);
  EXPECT_TRUE(e.empty());
}

// --- allocation-free steady state -------------------------------------------

/// 256 events in flight; each one schedules its successor 1..8 ns later at one
/// of 4 priorities, every 4th also schedules and cancels an extra event, and
/// every 8th re-arms itself instead of scheduling a successor.
class SelfRescheduling final : public EventTarget {
 public:
  explicit SelfRescheduling(Engine& e) : e_(e) {}
  void start() {
    for (int i = 0; i < 256; ++i) next(0);
  }
  void run_events(std::uint64_t n) {
    stop_at_ = handled_ + n;
    e_.run_until(kNever);
  }
  std::uint64_t handled() const { return handled_; }
  std::uint64_t checksum() const { return sum_; }

  Tick on_event(Event& ev) override {
    sum_ = sum_ * 31 + e_.now() + ev.tag;
    if (++handled_ == stop_at_) e_.stop();
    if (handled_ % 8 == 0) return e_.now() + ns(1 + rng_.below(8));  // re-arm, same priority
    next(e_.now());
    if (handled_ % 4 == 0) {
      EventId id;
      Tick t = e_.now() + ns(1 + rng_.below(8));
      Event& extra = e_.schedule(t, static_cast<std::uint8_t>(rng_.below(4)), {}, &id);
      extra.target = this;
      e_.cancel(id);
    }
    return kNever;
  }

 private:
  void next(Tick now) {
    Tick t = now + ns(1 + rng_.below(8));
    Event& ev = e_.schedule(t, static_cast<std::uint8_t>(rng_.below(4)), {});
    ev.target = this;
    ev.tag = handled_;
  }
  Engine& e_;
  Lcg rng_{7};
  std::uint64_t handled_ = 0, stop_at_ = 0, sum_ = 0;
};

TEST(EngineAllocation, SteadyStateSchedulingAndRunningAllocateNothing) {
#if defined(KBSIM_TEST_ASAN)
  GTEST_SKIP() << "AddressSanitizer replaces operator new; allocations are not counted";
#else
  Engine e;
  SelfRescheduling w(e);
  w.start();
  // Warm-up: slot chunks reach their size, and the queue's bucket buffers (which move between buckets) their
  // number and capacity; a buffer grows when a 65.5 ns block boundary gathers a new most of runs in one bucket.
  w.run_events(200000);
  ASSERT_EQ(w.handled(), 200000u);
  std::uint64_t before = e.events();
  std::uint64_t allocations = 0;
  {
    AllocationScope scope;
    w.run_events(100000);
    allocations = scope.allocations();
  }
  EXPECT_EQ(e.events() - before, 100000u);
  EXPECT_EQ(allocations, 0u) << "heap allocations in 100000 steady-state events";
#endif
}

TEST(EngineAllocation, TheCounterSeesAnAllocation) {
#if defined(KBSIM_TEST_ASAN)
  GTEST_SKIP() << "AddressSanitizer replaces operator new; allocations are not counted";
#else
  // Guards the test above against a counter that counts nothing.
  std::uint64_t allocations = 0;
  {
    AllocationScope scope;
    auto* p = new std::vector<int>(100);
    g_sink = p->data();  // escapes, so the allocation cannot be elided
    delete p;
    allocations = scope.allocations();
  }
  EXPECT_EQ(allocations, 2u);  // the vector object and its buffer
#endif
}

[[maybe_unused]] std::string torus_yaml(int x, int y) {
  auto id = [&](int i, int j) { return "n" + std::to_string((i + x) % x) + "_" + std::to_string((j + y) % y); };
  std::string s = "nodes:\n";
  for (int j = 0; j < y; ++j)
    for (int i = 0; i < x; ++i) s += "  - { id: " + id(i, j) + ", impl: builtin.mesh_node, params: { seed: 3 } }\n";
  s += "edges:\n";
  for (int j = 0; j < y; ++j)
    for (int i = 0; i < x; ++i)
      for (auto [di, dj] : {std::pair{1, 0}, std::pair{-1, 0}, std::pair{0, 1}, std::pair{0, -1}})
        s += "  - { src: " + id(i, j) + ", dst: " + id(i + di, j + dj) + ", kind: mesh, latency_ns: 1 }\n";
  return s;
}

TEST(EngineAllocation, MessageMeshTrafficAllocatesNothingPerEventAfterWarmUp) {
#if defined(KBSIM_TEST_ASAN)
  GTEST_SKIP() << "AddressSanitizer replaces operator new; allocations are not counted";
#else
  auto reg = test::builtin_registry();
  auto sys = test::build_system(*reg, torus_yaml(4, 4));
  // 16 nodes x 4 events in flight over 1 ns links: 64 events per ns.
  sys->run_until(ns(200));
  ASSERT_EQ(sys->events(), 64u * 200u);
  std::uint64_t allocations = 0;
  {
    AllocationScope scope;
    sys->run_until(ns(2000));
    allocations = scope.allocations();
  }
  EXPECT_EQ(sys->events(), 64u * 2000u);
  EXPECT_EQ(allocations, 0u) << "heap allocations in " << 64u * 1800u << " message-mesh events";
  sys->finish();
  std::uint64_t delivered = 0;
  for (const auto& n : sys->simulation().elaboration()->nodes) delivered += sys->stat(n.id, "received").count;
  EXPECT_EQ(delivered, 64u * 2000u);
#endif
}

}  // namespace
}  // namespace kbsim
