// The event engine: integer-picosecond time, events ordered by
// (time, priority, order, insertion sequence), schedule/cancel, run until a
// time. The order (root, lane) is the scheduler's: the simulation passes the
// root of the event being run (or a fresh one) and, in the lane, how early the
// event was scheduled and by which node, so that simultaneous events run in an
// order that does not depend on which process of a system run in parts learns of them
// when (docs/architecture.md, "The order of simultaneous events").
//
// Events scheduled one after another at the same (time, priority) in
// non-decreasing order form a run: a list linked through the slots, so many
// events at one time cost a few stores each. An event whose order is lower than
// its run's last starts a new run. When a time becomes the front, the runs of
// each priority are joined into one, by order (equal orders keep their insertion
// order); an event added at the front's time is inserted into its priority's
// run by order. Runs are ordered by a radix heap over time with one byte per level
// (docs/architecture.md, "The event engine"): each run is an entry
// {time, order, head, tail}, where the entry's order packs the priority above a
// 56-bit creation sequence, head is its first event not yet run and tail (kept
// in the front only) its last. Entries at the time being run ("the front") sit in one
// array sorted by order. Every later entry sits at the level of the highest byte in which its time differs from the
// front's time, in the bucket of that byte's value. When the front is spent, the lowest non-empty bucket holds the next
// time: at level 0 its entries all share it and become the front as they are;
// above, the bucket is scanned for its smallest time and its entries move to
// lower levels or to the front. An entry moves at most once per level (twice
// for times within 65 ns), each move a sequential copy. Two runs of one key
// hold their events in insertion order one after the other, since a run takes
// events only while it is the newest run.
//
// Event bodies live in a chunked slot pool with stable addresses and a free
// list. After warm-up, scheduling and running an event allocate nothing.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "kbsim/component.hpp"
#include "sim/watch.hpp"

namespace kbsim::core {

enum class EventKind : std::uint8_t { kTimer, kMessage, kFlit, kTrain };

/// Where an event stands among the events of its time and priority: by root, then lane, then insertion.
struct Order {
  std::uint32_t root = 0;
  std::uint64_t lane = 0;
};

struct Event;

/// Receives events. Returns kNever to release the event, or a time >= now to
/// fire the same event again then (used by flit trains).
class EventTarget {
 public:
  virtual Tick on_event(Event& ev) = 0;

 protected:
  ~EventTarget() = default;
};

/// One event body: one cache line. The fields beyond `target` belong to whoever scheduled it.
struct alignas(64) Event {
  EventTarget* target = nullptr;  ///< nullptr = free or cancelled
  const void* hint = nullptr;     ///< the handler's object (for Simulation: the component); prefetched ahead
  Ref<Message> msg;
  union {
    std::uint64_t tag = 0;  ///< a timer's
    Tick train_start;       ///< a flit train's: when its first flit was on the wire (plus the latency)
  };
  PortIndex port = 0;
  std::uint32_t generation = 0;  ///< the engine's: counts the slot's reuses, so a stale EventId is ignored
  std::uint32_t index = 0, count = 0, bytes = 0, hop = 0;
  std::uint32_t last_bytes = 0;
  std::uint32_t link : 29 = 0;  ///< a flit's link (whose serialization times a train's next flit); a kTrain's record
  std::uint32_t kind_ : 2 = 0;
  std::uint32_t train : 1 = 0;  ///< a flit train: re-arms itself for the next flit

  /// Give a fresh body (whose msg is empty) its message, with nothing to release.
  void take(Ref<Message>&& m) noexcept {
    if (msg) __builtin_unreachable();
    msg = std::move(m);
  }
  EventKind kind() const noexcept { return static_cast<EventKind>(kind_); }
  /// Kind `k`, no link, no train: the whole word in one store (no read of a line about to be overwritten).
  void set_kind(EventKind k) noexcept {
    link = 0;
    kind_ = static_cast<std::uint32_t>(k) & 3u;
    train = 0;
  }
};
static_assert(sizeof(Event) == 64, "an event body is one cache line");

class Engine {
 public:
  Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  Tick now() const noexcept { return now_; }
  /// Where the current time lives (stable for the engine's life): components read it without a call.
  const Tick* clock() const noexcept { return &now_; }
  std::uint64_t events() const noexcept { return events_; }
  bool empty() const noexcept { return pending_ == 0; }
  /// Drop every pending event (and its message) and free what held them; the clock and the count stay. The engine
  /// runs nothing more (a released system's: Simulation::release).
  void release() noexcept;

  /// Reserve an event at `at` (>= now) and return its body to fill in (its msg empty: see Event::take). Among
  /// events of one time and priority it runs by `order`, then in insertion order.
  [[gnu::always_inline]] Event& schedule(Tick at, std::uint8_t priority, Order order, EventId* id = nullptr) {
    if (at < now_) [[unlikely]]
      past(at);
    const std::uint32_t slot = acquire_slot();
    chain_[slot].root = order.root;
    chain_[slot].lane = order.lane;
    push(at, priority, slot);
    Event& ev = body(slot);
    if (id) *id = {slot, ev.generation};
    return ev;
  }
  /// Cancel a pending event; a stale or already-run id is ignored.
  void cancel(EventId id) noexcept;

  /// Run every event with time <= limit (kNever: until none is left or stop()).
  /// Afterwards now() == limit unless stopped early, limit is kNever or `advance` (below) is false.
  /// Returns true when a stop() ended the run early.
  bool run_until(Tick limit) { return run_until(limit, static_cast<EventTarget*>(nullptr)); }
  /// The same, calling `direct`'s on_event without a virtual call for the events it is the target of (the
  /// simulation's loop: its handler inlines into this one). `advance` false: now() stays at the last event even
  /// when the run ends at the limit (the windows of a run in parts, whose ends are not the model's times). `before` is
  /// called with its priority before each event runs (the op log of a run in parts notes where each part is; the
  /// default costs nothing).
  struct NoHook {
    void operator()(std::uint32_t priority) const noexcept { (void)priority; }
  };
  template <class Direct, class Before = NoHook>
  bool run_until(Tick limit, Direct* direct, bool advance = true, Before before = {});
  /// Ask the running loop to return after the current event (or, when no run
  /// is under way, the next run to return at once).
  void stop() noexcept { stop_ = true; }
  /// The time of the earliest pending event (cancelled ones included), kNever if none: where a run in parts' next
  /// window may start.
  Tick next_time() const noexcept;
  /// Whether a run (and so an event's handler) is under way, and the root of the event it runs or ran last.
  bool dispatching() const noexcept { return dispatching_; }
  std::uint32_t running_root() const noexcept { return chain_[running_].root; }
  /// The lane of the event being run, and its slot (the op log of a run in parts places records by the lane and keeps
  /// the last part of their order by the slot).
  std::uint64_t running_lane() const noexcept { return chain_[running_].lane; }
  std::uint32_t running_slot() const noexcept { return running_; }
  /// Whether the running event comes after an event of order `o` at the same time and priority (equal orders: the
  /// other first, as one scheduled before it would be).
  bool running_after(const Order& o) const noexcept {
    const Chain& c = chain_[running_];
    return o.root < c.root || (o.root == c.root && o.lane <= c.lane);
  }
  /// Give the running event, which its handler is about to fire again, the lane `lane` (a flit of a train walked
  /// flit by flit is ordered as the flit it stands for).
  void set_running_lane(std::uint64_t lane) noexcept { chain_[running_].lane = lane; }

 private:
  static constexpr std::uint32_t kNone = ~0u;
  static constexpr std::uint32_t kUnknownTail = kNone - 1;  ///< an Entry's tail to be found by a walk of its run
  static constexpr std::uint32_t kChunkBits = 10;
  static constexpr std::uint32_t kChunk = 1u << kChunkBits;
  static constexpr unsigned kSeqBits = 56;

  static constexpr std::uint64_t kSeqMask = (std::uint64_t{1} << kSeqBits) - 1;
  /// Entries a new bucket buffer starts with: most buckets hold a few runs (a model with spread-out times keeps
  /// hundreds of buckets filled at once), and a busy one grows; buffers circulate, keeping what they grew to.
  static constexpr std::size_t kMinBucket = 32;

  /// A pending run (events at one time and priority, in the order they were scheduled, linked through chain_):
  /// its time, its order among runs at that time (priority, then creation sequence), its first event and (in the
  /// front only, where a priority has one run) its last, once push_now needed it (else kNone).
  /// (Padded to 32 bytes, not 24: the loop's "is the front spent" test is then a shift, not a division. Padding,
  /// not alignas(32): an over-aligned type changes how the standard algorithms pass it.)
  struct Entry {
    Tick time;
    std::uint64_t order;
    std::uint32_t head;
    std::uint32_t tail = 0;
    std::uint32_t unused[2] = {};
    static bool before(const Entry& x, const Entry& y) noexcept { return x.order < y.order; }
  };
  static_assert(sizeof(Entry) == 32);

  Event& body(std::uint32_t slot) noexcept { return chunks_[slot >> kChunkBits][slot & (kChunk - 1)]; }
  std::uint32_t acquire_slot() {
    if (free_.empty()) [[unlikely]]
      add_chunk();
    const std::uint32_t slot = free_.back();
    free_.pop_back();
    return slot;
  }
  /// A slot's place in its run and its order.
  struct Chain {
    std::uint32_t next = kNone;  ///< the next slot of its run (kNone: the last)
    std::uint32_t root = 0;
    std::uint64_t lane = 0;
    /// Whether `a` comes before `b` by order alone.
    static bool before(const Chain& a, const Chain& b) noexcept {
      return a.root < b.root || (a.root == b.root && a.lane < b.lane);
    }
  };
  static_assert(sizeof(Chain) == 16);
  static std::uint32_t priority_of(const Entry& e) noexcept { return static_cast<std::uint32_t>(e.order >> kSeqBits); }
  void release_slot(std::uint32_t slot) noexcept {
    Event& ev = body(slot);
    ev.target = nullptr;
    ev.msg.reset();
    ++ev.generation;
    free_.push_back(slot);  // capacity was reserved when the chunk was added
  }
  void add_chunk();
  [[noreturn]] void past(Tick at) const;
  [[gnu::always_inline]] void push(Tick at, std::uint32_t priority, std::uint32_t slot) {
    ++pending_;
    chain_[slot].next = kNone;
    if (at == base_) {
      push_now(priority, slot);
      return;
    }
    if (recent_.holds(at, priority) && !Chain::before(chain_[slot], chain_[recent_.tail])) [[likely]] {
      chain_[recent_.tail].next = slot;  // most events join the run the previous one joined
      recent_.tail = slot;
      return;
    }
    join_open_run(at, priority, slot);
  }
  /// Append to the open run of (at > base_, priority) if the table holds one that `slot` does not come before,
  /// else start a run; it becomes recent_.
  void join_open_run(Tick at, std::uint32_t priority, std::uint32_t slot);
  /// Put an event at the front's time into its priority's run, by order (after the events of its order), or
  /// start that priority's run.
  void push_now(std::uint32_t priority, std::uint32_t slot);
  /// Put an entry at time base_ into the front, after every entry of its priority or lower.
  void push_front(const Entry& e);
  /// Join the front's runs of each priority into one run in (order, insertion) order, and find its last event;
  /// except a few runs of the first priority, which are joined as they run (lazy_end_).
  void merge_front();
  /// Of the runs still to be joined, the one whose first event comes first (the older on equal orders).
  std::size_t least_run() const noexcept {
    std::size_t best = front_pos_;
    for (std::size_t r = front_pos_ + 1; r < lazy_end_; ++r)
      if (Chain::before(chain_[front_[r].head], chain_[front_[best].head])) best = r;
    return best;
  }
  /// Choose the run to take events from among those still to be joined (lazy_at_), and note the least first
  /// event of the others (lazy_bound_): events are taken from it, one comparison each, until its next is not
  /// before that bound.
  void pick_lazy() noexcept;
  /// Join the runs still to be joined into one (an event is put at the front's time among them).
  void join_lazy() noexcept;
  /// An event's order and slot, as merge_front gathers them.
  struct Placed {
    std::uint64_t lane;
    std::uint32_t root, slot;
  };
  /// Merge the `n` gathered events' runs (scratch_, starts_) pairwise until one is left, the older run's events
  /// first on equal orders; returns where the merged events are (scratch_ or merged_).
  const Placed* merge_gathered(std::size_t n) noexcept;
  /// Merge two runs in order, `older`'s events first among equal orders; returns the first event.
  std::uint32_t merge_runs(std::uint32_t older, std::uint32_t newer) noexcept;
  std::uint32_t next_of(std::uint32_t slot) const noexcept { return chain_[slot].next; }
  /// The last event of `e`, a run at the front's time that is the only one of its priority.
  std::uint32_t tail_of(const Entry& e);
  /// Put an entry at time > base_ into its bucket.
  void push_level(const Entry& e) noexcept;
  /// Prefetch what the next event's handler touches first (its body was fetched ahead) and, two events further on,
  /// the body and link of the event after `after`. Slots are reused as they are freed, so once events have come and
  /// gone out of order (in a run in parts, messages leave for other processes and come from them) a time's events lie
  /// anywhere in memory, and a fetch started one event ahead is not back in time (message-mesh over 2 processes: 7%).
  void look_ahead(std::uint32_t next, std::uint32_t after) noexcept {
    const Event& n1 = body(next);
    __builtin_prefetch(n1.hint);
    __builtin_prefetch(n1.msg.get());
    if (after == kNone) return;
    const std::uint32_t later = chain_[after].next;
    if (later == kNone) return;
    __builtin_prefetch(&body(later));
    __builtin_prefetch(&chain_[later]);
  }
  /// Make the lowest non-empty bucket the front if its smallest time is <= limit; false if none is.
  bool refill(Tick limit);

  std::vector<std::unique_ptr<Event[]>> chunks_;
  std::vector<Chain> chain_;  ///< per slot
  std::vector<std::uint32_t> free_;
  /// merge_front's: the events of one priority's runs, gathered run after run (each run in order), where each run
  /// starts, and the buffer the merges of runs write to.
  std::vector<Placed> scratch_, merged_;
  std::vector<std::uint32_t> starts_, next_starts_;
  /// A run that still takes events: the newest run of its (time > base_, priority), so appending to it keeps the
  /// insertion order. Kept in a direct-mapped table by key; a run pushed out by another key only means its key's
  /// next event starts a new run. A place whose time the front has reached is not matched again: events at the
  /// front's time go to push_now, and none comes earlier (the table is cleared when a run ends on an empty
  /// queue with the base elsewhere than now).
  struct OpenRun {
    Tick time = 0;
    std::uint32_t tail = kNone;  ///< its last event (kNone: an empty place); a slot is in one run at a time
    std::uint32_t priority = 0;
    bool holds(Tick t, std::uint32_t p) const noexcept { return tail != kNone && time == t && priority == p; }
  };
  static_assert(sizeof(OpenRun) == 16);
  static constexpr unsigned kOpenBits = 12;
  static std::size_t open_index(Tick t, std::uint32_t priority) noexcept {
    return static_cast<std::size_t>(((t * 0x9E3779B97F4A7C15ULL) >> (64 - kOpenBits)) ^ priority) &
           ((std::size_t{1} << kOpenBits) - 1);
  }
  std::vector<OpenRun> open_ = std::vector<OpenRun>(std::size_t{1} << kOpenBits);
  OpenRun recent_;             ///< the run the last event joined; its place's tail is brought up to date on leaving
  std::size_t recent_at_ = 0;  ///< its place in open_
  std::vector<Entry> front_;   ///< runs at time base_, sorted by order; those before front_pos_ are spent
  std::size_t front_pos_ = 0;
  /// buckets_[l][d]: times whose highest byte differing from base_ is byte l, of value d there.
  std::array<std::array<std::vector<Entry>, 256>, 8> buckets_;
  std::array<std::array<std::uint64_t, 4>, 8> full_{};  ///< bit d of level l: buckets_[l][d] holds entries
  unsigned levels_ = 0;                                 ///< bit l: level l holds entries
  /// Storage of emptied buckets, handed to the next bucket to fill (so capacity follows the load).
  std::vector<std::vector<Entry>> spare_;
  Tick base_ = 0;  ///< the front's time (<= now_)
  std::uint64_t seq_ = 0;
  std::size_t pending_ = 0;  ///< events scheduled and not yet run (cancelled ones included)
  Tick now_ = 0;
  std::uint64_t events_ = 0;
  std::uint32_t running_ = 0;  ///< the slot of the event being run (its order is read only when asked for)
  bool dispatching_ = false;
  bool stop_ = false;
  /// When more than one: the entries [front_pos_, lazy_end_) are the first priority's runs (at most 4, from the
  /// front's start), not joined; each event taken is the least of their first events (pick_lazy: a comparison per
  /// event, not a walk of them).
  std::uint8_t lazy_end_ = 0;
  std::uint8_t lazy_at_ = 0;  ///< (pick_lazy)
  Chain lazy_bound_;          ///< (pick_lazy; its `next` is not used)
};

template <class Direct, class Before>
[[gnu::always_inline]] inline bool Engine::run_until(Tick limit, Direct* direct, bool advance, Before before) {
  if (watch::stop_requested()) stop_ = true;  // an interrupted run starts nothing more
  // Between events of this loop no outside code runs: whatever schedules meanwhile is a handler.
  struct Dispatching {  // outside code runs again once it returns, even after a handler threw
    bool& on;
    explicit Dispatching(bool& flag) : on(flag) { on = true; }
    ~Dispatching() { on = false; }
  } dispatching{dispatching_};
  while (!stop_) {
    if (front_pos_ == front_.size() && !refill(limit)) break;
    if (base_ > limit) break;  // the front was filled by an earlier run with a later limit
    std::size_t at = front_pos_;
    const bool lazy = lazy_end_ > at + 1;
    if (lazy) [[unlikely]]
      at = lazy_at_;
    Entry& top = front_[at];
    const std::uint32_t slot = top.head;
    const auto priority = static_cast<std::uint32_t>(top.order >> kSeqBits);
    top.head = chain_[slot].next;
    if (top.head != kNone) {
      look_ahead(top.head, chain_[top.head].next);  // along the run
      if (lazy && !Chain::before(chain_[top.head], lazy_bound_)) [[unlikely]]
        pick_lazy();  // another run's first event comes next
    } else if (at != front_pos_) {
      front_.erase(front_.begin() + static_cast<std::ptrdiff_t>(at));  // one of the runs still to be joined
      if (--lazy_end_ > front_pos_ + 1) pick_lazy();
    } else {
      // The run is spent; events the handler adds at this time and priority start a new one (push_now).
      ++front_pos_;
      if (lazy_end_ > front_pos_ + 1) pick_lazy();
      if (front_pos_ < front_.size()) {  // along the front
        const std::uint32_t after = front_pos_ + 1 < front_.size() ? front_[front_pos_ + 1].head : kNone;
        if (after != kNone) __builtin_prefetch(&body(after));  // (look_ahead fetches the one after it)
        look_ahead(front_[front_pos_].head, after);
      }
    }
    --pending_;
    Event& ev = body(slot);
    if (ev.target == nullptr) {
      release_slot(slot);
      continue;
    }
    now_ = base_;
    if ((++events_ & 0xFFFF) == 0) {  // the heartbeat: progress, and a stop asked from outside
      watch::beat(now_, events_);
      if (watch::stop_requested()) stop_ = true;
    }
    running_ = slot;
    before(priority);
    Tick again;
    if constexpr (std::is_same_v<Direct, EventTarget>) {
      again = ev.target->on_event(ev);
    } else {
      again = ev.target == direct ? direct->Direct::on_event(ev) : ev.target->on_event(ev);
    }
    if (again != kNever && ev.target != nullptr) {
      if (again < now_) [[unlikely]]
        past(again);  // a re-armed event is scheduled anew: never before now
      push(again, priority, slot);
    } else {
      release_slot(slot);
    }
  }
  // An empty queue takes the time it ends at as its base: cancelled events at a later time may have moved the base
  // beyond now(), where a later schedule() between now() and the base could not be ordered.
  if (front_pos_ == front_.size() && levels_ == 0 && base_ != now_) {
    // Open runs at times the base passed are forgotten: once the base goes back, those times come again.
    recent_.tail = kNone;
    std::fill(open_.begin(), open_.end(), OpenRun{});
    base_ = now_;
  }
  const bool stopped = stop_;
  if (!stopped && advance && limit != kNever && now_ < limit) now_ = limit;
  stop_ = false;  // a stop ends one run; the next run_until resumes
  return stopped;
}

}  // namespace kbsim::core
