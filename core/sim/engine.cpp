#include "sim/engine.hpp"

#include "kbsim/errors.hpp"
#include "sim/watch.hpp"

namespace kbsim::core {

Engine::Engine() : table_(std::size_t{1} << (64 - 58), kNone) {
  heap_.reserve(64);
  free_.reserve(kChunk);
}

std::uint32_t Engine::acquire_slot() {
  if (free_.empty()) {
    auto base = static_cast<std::uint32_t>(chunks_.size() * kChunk);
    chunks_.push_back(std::make_unique<Event[]>(kChunk));
    generation_.resize(base + kChunk, 0);
    next_.resize(base + kChunk, kNone);
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
  if (at < now_)
    throw SimError("event scheduled in the past (at " + std::to_string(at) + " ps, now " + std::to_string(now_) +
                   " ps)");
  std::uint32_t slot = acquire_slot();
  enqueue(at, priority, slot);
  if (id) *id = {slot, generation_[slot]};
  return body(slot);
}

void Engine::cancel(EventId id) noexcept {
  if (id.slot >= generation_.size() || generation_[id.slot] != id.generation) return;
  Event& ev = body(id.slot);
  ev.target = nullptr;  // dropped when its turn comes
  ev.msg.reset();
}

void Engine::enqueue(Tick at, std::uint32_t priority, std::uint32_t slot) {
  std::uint32_t b = find_or_add_bucket(at, priority);
  Bucket& bucket = buckets_[b];
  next_[slot] = kNone;
  if (bucket.tail == kNone) {
    bucket.head = slot;
  } else {
    next_[bucket.tail] = slot;
  }
  bucket.tail = slot;
}

std::uint32_t Engine::find_or_add_bucket(Tick t, std::uint32_t p) {
  if (recent_ != kNone && buckets_[recent_].time == t && buckets_[recent_].priority == p) return recent_;
  const std::size_t mask = table_.size() - 1;
  std::size_t i = hash(t, p);
  for (;; i = (i + 1) & mask) {
    std::uint32_t b = table_[i];
    if (b == kNone) break;
    if (buckets_[b].time == t && buckets_[b].priority == p) return recent_ = b;
  }
  std::uint32_t b;
  if (free_buckets_.empty()) {
    b = static_cast<std::uint32_t>(buckets_.size());
    buckets_.push_back({});
  } else {
    b = free_buckets_.back();
    free_buckets_.pop_back();
  }
  buckets_[b] = {t, p, kNone, kNone};
  table_[i] = b;
  heap_push({t, p, b});
  if (++table_used_ * 2 > table_.size()) grow_table();
  return recent_ = b;
}

void Engine::remove_from_table(std::uint32_t bucket) noexcept {
  // Linear probing with backward-shift deletion: no tombstones.
  const std::size_t mask = table_.size() - 1;
  std::size_t i = hash(buckets_[bucket].time, buckets_[bucket].priority);
  while (table_[i] != bucket) i = (i + 1) & mask;
  for (std::size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
    std::uint32_t b = table_[j];
    if (b == kNone) break;
    std::size_t home = hash(buckets_[b].time, buckets_[b].priority);
    // Move b back to the hole unless its home lies cyclically in (i, j].
    bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (!stays) {
      table_[i] = b;
      i = j;
    }
  }
  table_[i] = kNone;
  --table_used_;
}

void Engine::grow_table() {
  std::vector<std::uint32_t> old;
  old.swap(table_);
  table_.assign(old.size() * 2, kNone);
  --hash_shift_;
  const std::size_t mask = table_.size() - 1;
  for (std::uint32_t b : old) {
    if (b == kNone) continue;
    std::size_t i = hash(buckets_[b].time, buckets_[b].priority);
    while (table_[i] != kNone) i = (i + 1) & mask;
    table_[i] = b;
  }
}

void Engine::heap_push(HeapEntry e) {
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

void Engine::heap_pop() noexcept {
  HeapEntry last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return;
  std::size_t i = 0;
  for (;;) {
    std::size_t child = 4 * i + 1;
    if (child >= n) break;
    std::size_t best = child;
    if (child + 4 <= n) {
      std::size_t a = before(heap_[child + 1], heap_[child]) ? child + 1 : child;
      std::size_t b = before(heap_[child + 3], heap_[child + 2]) ? child + 3 : child + 2;
      best = before(heap_[b], heap_[a]) ? b : a;
    } else {
      for (std::size_t c = child + 1; c < n; ++c)
        if (before(heap_[c], heap_[best])) best = c;
    }
    if (!before(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
}

bool Engine::run_until(Tick limit) {
  if (watch::stop_requested()) stop_ = true;  // an interrupted run starts nothing more
  while (!heap_.empty() && !stop_) {
    const std::uint32_t b = heap_.front().bucket;
    Bucket& bucket = buckets_[b];
    if (bucket.time > limit) break;
    const Tick time = bucket.time;
    const std::uint32_t priority = bucket.priority;
    const std::uint32_t slot = bucket.head;
    bucket.head = next_[slot];
    if (bucket.head == kNone) {
      // The bucket is spent; events the handler adds at the same key start a new one.
      heap_pop();
      remove_from_table(b);
      bucket.time = kNever;  // a spent bucket never matches a key (nothing is scheduled at kNever)
      free_buckets_.push_back(b);
    }
    // Look ahead in the bucket: the next event's handler data and the body after it.
    if (std::uint32_t n1 = next_[slot]; n1 != kNone) {
      __builtin_prefetch(body(n1).hint);
      if (std::uint32_t n2 = next_[n1]; n2 != kNone) __builtin_prefetch(&body(n2));
    }
    Event& ev = body(slot);
    if (ev.target == nullptr) {
      release_slot(slot);
      continue;
    }
    now_ = time;
    if ((++events_ & 0xFFFF) == 0) {  // the heartbeat: progress, and a stop asked from outside
      watch::beat(now_, events_);
      if (watch::stop_requested()) stop_ = true;
    }
    Tick again = ev.target->on_event(ev);
    if (again != kNever && ev.target != nullptr) {
      enqueue(again, priority, slot);
    } else {
      release_slot(slot);
    }
  }
  const bool stopped = stop_;
  if (!stopped && limit != kNever && now_ < limit) now_ = limit;
  stop_ = false;  // a stop ends one run; the next run_until resumes
  return stopped;
}

}  // namespace kbsim::core
