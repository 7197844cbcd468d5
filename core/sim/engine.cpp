#include "sim/engine.hpp"

#include <algorithm>
#include <bit>
#include <utility>

#include "kbsim/errors.hpp"
#include "sim/watch.hpp"

namespace kbsim::core {

Engine::Engine() {
  free_.reserve(kChunk);
  front_.reserve(64);
  spare_.reserve(8 * 256 + 1);  // every bucket and the front: spare_ never grows in a run
}

namespace {
template <class V>
void free_all(V& v) noexcept {
  V().swap(v);
}
}  // namespace

void Engine::release() noexcept {
  free_all(chunks_);
  free_all(chain_);
  free_all(free_);
  free_all(scratch_);
  free_all(merged_);
  free_all(starts_);
  free_all(next_starts_);
  free_all(open_);
  free_all(front_);
  for (auto& level : buckets_)
    for (auto& bucket : level) free_all(bucket);
  free_all(spare_);
  front_pos_ = 0;
  full_ = {};
  levels_ = 0;
  pending_ = 0;
  lazy_end_ = lazy_at_ = 0;
}

void Engine::add_chunk() {
  auto base = static_cast<std::uint32_t>(chunks_.size() * kChunk);
  chunks_.push_back(std::make_unique<Event[]>(kChunk));
  chain_.resize(std::size_t{base} + kChunk);
  scratch_.reserve(chain_.size());  // merge_front gathers at most every slot: no allocation while running
  merged_.resize(chain_.size());
  starts_.reserve(chain_.size() + 1);
  next_starts_.reserve(chain_.size() + 1);
  free_.reserve(std::size_t{base} + kChunk);
  for (std::uint32_t i = kChunk; i-- > 0;) free_.push_back(base + i);
}

void Engine::past(Tick at) const {
  throw SimError("event scheduled in the past (at " + std::to_string(at) + " ps, now " + std::to_string(now_) + " ps)");
}

void Engine::cancel(EventId id) noexcept {
  if (id.slot >= chunks_.size() * kChunk) return;
  Event& ev = body(id.slot);
  if (ev.generation != id.generation) return;
  ev.target = nullptr;  // dropped when its turn comes
  ev.msg.reset();
}

void Engine::join_open_run(Tick at, std::uint32_t priority, std::uint32_t slot) {
  if (recent_.tail != kNone) open_[recent_at_].tail = recent_.tail;  // the place it left is up to date
  recent_at_ = open_index(at, priority);
  OpenRun& place = open_[recent_at_];
  if (place.holds(at, priority) && !Chain::before(chain_[slot], chain_[place.tail])) {
    chain_[place.tail].next = slot;
    recent_ = {at, slot, priority};
    place.tail = slot;
    return;
  }
  recent_ = {at, slot, priority};  // a new run, and the newest of its key
  place = recent_;
  push_level({at, (std::uint64_t{priority} << kSeqBits) | seq_++, slot});  // at > base_: a bucket above the front
}

void Engine::push_now(std::uint32_t priority, std::uint32_t slot) {
  if (lazy_end_ > front_pos_ + 1 && priority <= priority_of(front_[front_pos_])) join_lazy();
  for (std::size_t i = front_pos_; i < front_.size(); ++i) {
    Entry& e = front_[i];
    if (priority_of(e) < priority) continue;
    if (priority_of(e) > priority) break;
    // Its priority's run: after every event of its order or lower (it is the newest), before any of a higher one;
    // one lower than every event left runs next.
    if (e.tail == kNone) e.tail = tail_of(e);
    if (e.tail == kUnknownTail)
      for (e.tail = e.head; next_of(e.tail) != kNone;) e.tail = next_of(e.tail);
    const Chain& c = chain_[slot];
    if (!Chain::before(c, chain_[e.tail])) {
      chain_[e.tail].next = slot;
      e.tail = slot;
    } else if (Chain::before(c, chain_[e.head])) {
      chain_[slot].next = e.head;
      e.head = slot;
    } else {
      std::uint32_t after = e.head;  // the tail comes after it: the walk ends before the tail
      while (!Chain::before(c, chain_[chain_[after].next])) after = chain_[after].next;
      chain_[slot].next = chain_[after].next;
      chain_[after].next = slot;
    }
    return;
  }
  push_front({base_, (std::uint64_t{priority} << kSeqBits) | seq_++, slot, slot});
}

void Engine::push_level(const Entry& e) noexcept {
  const auto level = static_cast<unsigned>(std::bit_width(e.time ^ base_) - 1) / 8;
  const auto digit = static_cast<unsigned>(e.time >> (8 * level)) & 0xFF;
  std::vector<Entry>& to = buckets_[level][digit];
  if (to.capacity() == 0) {
    if (spare_.empty()) {
      to.reserve(kMinBucket);  // a new buffer: more non-empty buckets at once than ever before
    } else {
      to.swap(spare_.back());
      spare_.pop_back();
    }
  }
  to.push_back(e);  // after warm-up its capacity suffices: buffers circulate through spare_
  full_[level][digit / 64] |= std::uint64_t{1} << (digit % 64);
  levels_ |= 1u << level;
}

void Engine::push_front(const Entry& e) {
  // Its sequence is the newest, so it goes after every entry of its priority or lower: before the run being
  // drained when its priority is lower (it runs next), else after it.
  if (front_pos_ == front_.size() || front_.back().order < e.order) {
    front_.push_back(e);
    return;
  }
  auto it = std::upper_bound(front_.begin() + static_cast<std::ptrdiff_t>(front_pos_), front_.end(), e, Entry::before);
  front_.insert(it, e);
}

bool Engine::refill(Tick limit) {
  if (levels_ == 0) return false;
  const auto level = static_cast<unsigned>(std::countr_zero(levels_));
  unsigned word = 0;
  while (full_[level][word] == 0) ++word;
  const unsigned digit = 64 * word + static_cast<unsigned>(std::countr_zero(full_[level][word]));
  std::vector<Entry>& from = buckets_[level][digit];
  Tick least = from.front().time;
  if (level > 0)
    for (const Entry& e : from) least = std::min(least, e.time);
  if (least > limit) return false;  // nothing moves: a later schedule may still come before it
  base_ = least;
  front_.clear();
  front_pos_ = 0;
  full_[level][word] &= full_[level][word] - 1;
  if (full_[level] == std::array<std::uint64_t, 4>{}) levels_ &= ~(1u << level);
  if (level == 0) {
    front_.swap(from);  // one time in all: the bucket becomes the front as it is
  } else {
    // Every entry differs from the new base below this level only: it joins the front or a lower level.
    for (const Entry& e : from) {
      if (e.time == least) {
        front_.push_back(e);
      } else {
        push_level(e);
      }
    }
  }
  from.clear();
  if (from.capacity() > 0) spare_.push_back(std::move(from));
  if (!std::is_sorted(front_.begin(), front_.end(), Entry::before))
    std::sort(front_.begin(), front_.end(), Entry::before);
  lazy_end_ = 0;
  if (front_.size() == 1) {
    front_[0].tail = kNone;  // one run: nothing to join (its last event is found when push_now needs it)
  } else {
    merge_front();
    if (lazy_end_ > front_pos_ + 1) pick_lazy();
  }
  return true;
}

Tick Engine::next_time() const noexcept {
  if (front_pos_ < front_.size()) return base_;
  if (levels_ == 0) return kNever;
  const auto level = static_cast<unsigned>(std::countr_zero(levels_));
  unsigned word = 0;
  while (full_[level][word] == 0) ++word;
  const unsigned digit = 64 * word + static_cast<unsigned>(std::countr_zero(full_[level][word]));
  Tick least = kNever;
  for (const Entry& e : buckets_[level][digit]) least = std::min(least, e.time);
  return least;
}

void Engine::merge_front() {
  std::size_t out = 0;
  for (std::size_t i = 0; i < front_.size();) {
    std::size_t end = i + 1;
    while (end < front_.size() && priority_of(front_[end]) == priority_of(front_[i])) ++end;
    Entry merged = front_[i];
    if (end == i + 1) {
      merged.tail = kNone;  // one run: in order already; its last event is found when push_now needs it
    } else if (end - i <= 4 && i == 0) {
      // The first priority's few runs stay where they are, to be joined as they run. The last one left is a run
      // of its own, whose last event is found when push_now needs it: through the open-run table for the newest
      // run of the key, by a walk for an older one.
      for (std::size_t r = i; r < end; ++r) front_[r].tail = r + 1 == end ? kNone : kUnknownTail;
      lazy_end_ = static_cast<std::uint8_t>(end);  // (end <= 4: the first group)
      out = end;
      i = end;
      continue;
    } else if (end - i <= 4) {
      // A few runs of one priority, each in order, in creation order (an older run's events were all scheduled
      // before a newer one's): merged pairwise, the older first on equal orders.
      for (std::size_t r = i + 1; r < end; ++r) merged.head = merge_runs(merged.head, front_[r].head);
      std::uint32_t last = merged.head;
      while (next_of(last) != kNone) last = next_of(last);
      merged.tail = last;
    } else {
      // Many: their events' keys gathered run after run, and the runs merged pairwise on those copies
      // (n log(runs) comparisons, where a sort took n log n: a busy instant has ~30 events in ~8 runs).
      scratch_.clear();
      starts_.clear();
      for (std::size_t r = i; r < end; ++r) {
        starts_.push_back(static_cast<std::uint32_t>(scratch_.size()));
        for (std::uint32_t s = front_[r].head; s != kNone; s = chain_[s].next)
          scratch_.push_back({chain_[s].lane, chain_[s].root, s});
      }
      const std::size_t n = scratch_.size();
      starts_.push_back(static_cast<std::uint32_t>(n));
      const Placed* in_order = merge_gathered(n);
      for (std::size_t k = 0; k + 1 < n; ++k) chain_[in_order[k].slot].next = in_order[k + 1].slot;
      chain_[in_order[n - 1].slot].next = kNone;
      merged.head = in_order[0].slot;
      merged.tail = in_order[n - 1].slot;
    }
    front_[out++] = merged;
    i = end;
  }
  front_.resize(out);
}

const Engine::Placed* Engine::merge_gathered(std::size_t n) noexcept {
  // std::merge takes from its first range on equal keys, and the older run comes first: equal orders keep their
  // insertion order.
  auto before = [](const Placed& a, const Placed& b) { return a.root != b.root ? a.root < b.root : a.lane < b.lane; };
  Placed* from = scratch_.data();
  Placed* to = merged_.data();  // (sized to every slot when the slots were added)
  while (starts_.size() > 2) {
    next_starts_.clear();
    Placed* out = to;
    for (std::size_t k = 0; k + 1 < starts_.size(); k += 2) {
      next_starts_.push_back(static_cast<std::uint32_t>(out - to));
      Placed* a = from + starts_[k];
      Placed* b = from + starts_[k + 1];
      out = k + 2 < starts_.size() ? std::merge(a, b, b, from + starts_[k + 2], out, before) : std::copy(a, b, out);
    }
    next_starts_.push_back(static_cast<std::uint32_t>(n));
    starts_.swap(next_starts_);
    std::swap(from, to);
  }
  return from;
}

void Engine::pick_lazy() noexcept {
  const std::size_t at = least_run();
  lazy_at_ = static_cast<std::uint8_t>(at);
  lazy_bound_ = {kNone, ~std::uint32_t{0}, ~std::uint64_t{0}};
  for (std::size_t r = front_pos_; r < lazy_end_; ++r)
    if (r != at && Chain::before(chain_[front_[r].head], lazy_bound_)) lazy_bound_ = chain_[front_[r].head];
}

void Engine::join_lazy() noexcept {
  Entry& merged = front_[front_pos_];
  for (std::size_t r = front_pos_ + 1; r < lazy_end_; ++r) merged.head = merge_runs(merged.head, front_[r].head);
  std::uint32_t last = merged.head;
  while (next_of(last) != kNone) last = next_of(last);
  merged.tail = last;
  front_.erase(front_.begin() + static_cast<std::ptrdiff_t>(front_pos_ + 1),
               front_.begin() + static_cast<std::ptrdiff_t>(lazy_end_));
  lazy_end_ = 0;
}

std::uint32_t Engine::merge_runs(std::uint32_t older, std::uint32_t newer) noexcept {
  std::uint32_t head = kNone;
  std::uint32_t* link = &head;
  while (older != kNone && newer != kNone) {
    std::uint32_t& take = Chain::before(chain_[newer], chain_[older]) ? newer : older;
    *link = take;
    link = &chain_[take].next;
    take = chain_[take].next;
  }
  *link = older != kNone ? older : newer;
  return head;
}

std::uint32_t Engine::tail_of(const Entry& e) {
  // The newest run of its key: its place holds its last event unless another key pushed it out.
  if (recent_.tail != kNone) open_[recent_at_].tail = recent_.tail;
  const auto priority = priority_of(e);
  if (const OpenRun& place = open_[open_index(e.time, priority)]; place.holds(e.time, priority)) return place.tail;
  std::uint32_t s = e.head;
  while (chain_[s].next != kNone) s = chain_[s].next;
  return s;
}

}  // namespace kbsim::core
