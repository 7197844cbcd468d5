#include "sim/engine.hpp"

#include <algorithm>
#include <bit>

#include "kbsim/errors.hpp"
#include "sim/watch.hpp"

namespace kbsim::core {

Engine::Engine() {
  free_.reserve(kChunk);
  front_.reserve(64);
  spare_.reserve(8 * 256 + 1);  // every bucket and the front: spare_ never grows in a run
}

void Engine::add_chunk() {
  auto base = static_cast<std::uint32_t>(chunks_.size() * kChunk);
  chunks_.push_back(std::make_unique<Event[]>(kChunk));
  next_.resize(std::size_t{base} + kChunk, kNone);
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
  if (place.holds(at, priority)) {
    next_[place.tail] = slot;
    recent_ = {at, slot, priority};
    place.tail = slot;
    return;
  }
  recent_ = {at, slot, priority};  // a new run, and the newest of its key
  place = recent_;
  // at >= now_ >= base_: the entry goes to the front or to a bucket above it.
  const Entry e{at, (std::uint64_t{priority} << kSeqBits) | seq_++, slot};
  if (at == base_) {
    push_front(e);
  } else {
    push_level(e);
  }
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
  return true;
}

}  // namespace kbsim::core
