// The event engine: integer-picosecond time, events ordered by
// (time, priority, insertion sequence), schedule/cancel, run until a time.
//
// Events that share a (time, priority) form one FIFO bucket: insertion order
// is sequence order, so a bucket needs no sorting. Buckets are found through
// an open-addressing hash table and ordered by a 4-ary heap of distinct keys.
// Event bodies live in a chunked slot pool with stable addresses and a free
// list. After warm-up, scheduling and running an event allocate nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kbsim/component.hpp"

namespace kbsim::core {

enum class EventKind : std::uint8_t { kTimer, kMessage, kFlit };

struct Event;

/// Receives events. Returns kNever to release the event, or a time >= now to
/// fire the same event again then (used by flit trains).
class EventTarget {
 public:
  virtual Tick on_event(Event& ev) = 0;

 protected:
  ~EventTarget() = default;
};

/// One event body. The fields beyond `target` belong to whoever scheduled it.
struct Event {
  EventTarget* target = nullptr;  ///< nullptr = free or cancelled
  const void* hint = nullptr;     ///< the handler's object (for Simulation: the component); prefetched ahead
  Ref<Message> msg;
  std::uint64_t tag = 0;
  PortIndex port = 0;
  std::uint32_t index = 0, count = 0, bytes = 0, hop = 0;
  std::uint32_t last_bytes = 0;
  Tick train_start = 0;
  Tick ser_full = 0;
  Tick ser_last = 0;
  EventKind kind = EventKind::kTimer;
  bool train = false;  ///< a flit train: re-arms itself for the next flit
};

class Engine {
 public:
  Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  Tick now() const noexcept { return now_; }
  std::uint64_t events() const noexcept { return events_; }
  bool empty() const noexcept { return heap_.empty(); }

  /// Reserve an event at `at` (>= now) and return its body to fill in.
  Event& schedule(Tick at, std::uint8_t priority, EventId* id = nullptr);
  /// Cancel a pending event; a stale or already-run id is ignored.
  void cancel(EventId id) noexcept;

  /// Run every event with time <= limit (kNever: until none is left or stop()).
  /// Afterwards now() == limit unless stopped early or limit is kNever.
  /// Returns true when a stop() ended the run early.
  bool run_until(Tick limit);
  /// Ask the running loop to return after the current event (or, when no run
  /// is under way, the next run to return at once).
  void stop() noexcept { stop_ = true; }

 private:
  static constexpr std::uint32_t kNone = ~0u;
  static constexpr std::uint32_t kChunkBits = 10;
  static constexpr std::uint32_t kChunk = 1u << kChunkBits;

  struct Bucket {
    Tick time;
    std::uint32_t priority;
    std::uint32_t head, tail;  ///< FIFO of slots, linked through next_
  };
  /// A heap entry carries its bucket's key, so ordering never chases a pointer.
  struct HeapEntry {
    Tick time;
    std::uint32_t priority;
    std::uint32_t bucket;
  };
  static bool before(const HeapEntry& x, const HeapEntry& y) noexcept {
    return static_cast<bool>(static_cast<int>(x.time < y.time) |
                             (static_cast<int>(x.time == y.time) & static_cast<int>(x.priority < y.priority)));
  }

  Event& body(std::uint32_t slot) noexcept { return chunks_[slot >> kChunkBits][slot & (kChunk - 1)]; }
  std::uint32_t acquire_slot();
  void release_slot(std::uint32_t slot) noexcept;
  void enqueue(Tick at, std::uint32_t priority, std::uint32_t slot);

  // buckets: hash table (time, priority) -> bucket, heap of buckets
  std::size_t hash(Tick t, std::uint32_t p) const noexcept {
    return static_cast<std::size_t>(((t * 0x9E3779B97F4A7C15ULL) ^ (p * 0xC2B2AE3D27D4EB4FULL)) >> hash_shift_);
  }
  std::uint32_t find_or_add_bucket(Tick t, std::uint32_t p);
  void remove_from_table(std::uint32_t bucket) noexcept;
  void grow_table();
  void heap_push(HeapEntry e);
  void heap_pop() noexcept;

  std::vector<std::unique_ptr<Event[]>> chunks_;
  std::vector<std::uint32_t> generation_;
  std::vector<std::uint32_t> next_;
  std::vector<std::uint32_t> free_;
  std::vector<Bucket> buckets_;
  std::vector<std::uint32_t> free_buckets_;
  std::vector<std::uint32_t> table_;
  std::uint32_t recent_ = kNone;  ///< the bucket found last: most events share the previous key
  unsigned hash_shift_ = 64 - 6;
  std::size_t table_used_ = 0;
  std::vector<HeapEntry> heap_;
  Tick now_ = 0;
  std::uint64_t events_ = 0;
  bool stop_ = false;
};

}  // namespace kbsim::core
