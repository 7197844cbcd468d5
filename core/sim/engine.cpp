#include "sim/engine.hpp"

#include "kbsim/errors.hpp"

namespace kbsim::core {

namespace {
constexpr std::uint64_t kSeqMask = (std::uint64_t{1} << 56) - 1;
}

Engine::Engine() {
  heap_.reserve(kChunk);
  free_.reserve(kChunk);
}

std::uint32_t Engine::acquire_slot() {
  if (free_.empty()) {
    auto base = static_cast<std::uint32_t>(chunks_.size() * kChunk);
    chunks_.push_back(std::make_unique<Event[]>(kChunk));
    generation_.resize(base + kChunk, 0);
    free_.reserve(generation_.size());
    for (std::uint32_t i = kChunk; i-- > 0;) free_.push_back(base + i);
  }
  std::uint32_t slot = free_.back();
  free_.pop_back();
  return slot;
}

void Engine::release_slot(std::uint32_t slot) noexcept {
  Event& ev = body(slot);
  ev.target = nullptr;
  ev.msg.reset();
  ++generation_[slot];
  free_.push_back(slot);  // capacity was reserved when the chunk was added
}

Event& Engine::schedule(Tick at, std::uint8_t priority, EventId* id) {
  if (at < now_) throw SimError("event scheduled in the past");
  std::uint32_t slot = acquire_slot();
  push({at, (std::uint64_t{priority} << 56) | (seq_++ & kSeqMask), slot});
  if (id) *id = {slot, generation_[slot]};
  return body(slot);
}

void Engine::cancel(EventId id) noexcept {
  if (id.slot >= generation_.size() || generation_[id.slot] != id.generation) return;
  Event& ev = body(id.slot);
  ev.target = nullptr;  // the heap entry is dropped when it reaches the top
  ev.msg.reset();
}

void Engine::push(Entry e) {
  heap_.push_back(e);
  std::size_t i = heap_.size() - 1;
  while (i > 0) {
    std::size_t parent = (i - 1) / 4;
    if (!before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void Engine::pop_top() noexcept {
  Entry last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return;
  std::size_t i = 0;
  for (;;) {
    std::size_t child = 4 * i + 1;
    if (child >= n) break;
    std::size_t best = child;
    std::size_t end = child + 4 < n ? child + 4 : n;
    for (std::size_t c = child + 1; c < end; ++c)
      if (before(heap_[c], heap_[best])) best = c;
    if (!before(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
}

void Engine::run_until(Tick limit) {
  stop_ = false;
  while (!heap_.empty() && !stop_) {
    const Entry top = heap_.front();
    if (top.time > limit) break;
    pop_top();
    Event& ev = body(top.slot);
    if (ev.target == nullptr) {
      release_slot(top.slot);
      continue;
    }
    now_ = top.time;
    ++events_;
    Tick again = ev.target->on_event(ev);
    if (again != kNever && ev.target != nullptr) {
      push({again, (top.key & ~kSeqMask) | (seq_++ & kSeqMask), top.slot});
    } else {
      release_slot(top.slot);
    }
  }
  if (!stop_ && limit != kNever && now_ < limit) now_ = limit;
}

}  // namespace kbsim::core
