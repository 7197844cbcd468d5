// The event engine: integer-picosecond time, events ordered by
// (time, priority, insertion sequence), schedule/cancel, run until a time.
//
// Event bodies live in a chunked slot pool with stable addresses and a free
// list; the ready queue is a 4-ary heap of small entries. After warm-up no
// event costs a heap allocation.
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
  Ref<Message> msg;
  std::uint64_t tag = 0;
  NodeIndex node = 0;
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
  std::size_t pending() const noexcept { return heap_.size(); }

  /// Reserve an event at `at` (>= now) and return its body to fill in.
  Event& schedule(Tick at, std::uint8_t priority, EventId* id = nullptr);
  /// Cancel a pending event; a stale or already-run id is ignored.
  void cancel(EventId id) noexcept;

  /// Run every event with time <= limit (kNever: until none is left or stop()).
  /// Afterwards now() == limit unless stopped early or limit is kNever.
  void run_until(Tick limit);
  /// Ask the running loop to return after the current event.
  void stop() noexcept { stop_ = true; }
  bool stopped() const noexcept { return stop_; }

 private:
  struct Entry {
    Tick time;
    std::uint64_t key;  ///< priority << 56 | sequence
    std::uint32_t slot;
  };
  static bool before(const Entry& a, const Entry& b) noexcept {
    return a.time < b.time || (a.time == b.time && a.key < b.key);
  }
  static constexpr std::uint32_t kChunkBits = 10;
  static constexpr std::uint32_t kChunk = 1u << kChunkBits;

  Event& body(std::uint32_t slot) noexcept { return chunks_[slot >> kChunkBits][slot & (kChunk - 1)]; }
  std::uint32_t acquire_slot();
  void release_slot(std::uint32_t slot) noexcept;
  void push(Entry e);
  void pop_top() noexcept;

  std::vector<std::unique_ptr<Event[]>> chunks_;
  std::vector<std::uint32_t> generation_;
  std::vector<std::uint32_t> free_;
  std::vector<Entry> heap_;
  Tick now_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t events_ = 0;
  bool stop_ = false;
};

}  // namespace kbsim::core
