// A first-in first-out queue for a component's waiting work (commands, transfers, callers waiting for a slot).
// Unlike std::deque it allocates nothing until something is queued: a system has thousands of components whose
// queues mostly stay empty, and every one of std::deque's took two allocations (a map and a 512-byte block) when the
// component was built. Elements live in a ring whose capacity is a power of two and doubles when full; a popped
// place is reset to T{} at once, so what it held (a message's reference, say) is released then.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace kbsim {

/// T must be default-constructible and movable.
template <class T>
class Fifo {
 public:
  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }

  /// The `i`-th queued element (0: the front).
  T& operator[](std::size_t i) noexcept { return ring_[(head_ + i) & (ring_.size() - 1)]; }
  const T& operator[](std::size_t i) const noexcept { return ring_[(head_ + i) & (ring_.size() - 1)]; }
  T& front() noexcept { return ring_[head_]; }
  const T& front() const noexcept { return ring_[head_]; }

  template <class... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == ring_.size()) grow();
    T& place = (*this)[size_];
    place = T{std::forward<Args>(args)...};
    ++size_;
    return place;
  }
  void push_back(T value) { emplace_back(std::move(value)); }
  /// Queue `value` at position `i` (0: the front); the elements from there on move back one place.
  void insert(std::size_t i, T value) {
    emplace_back(std::move(value));
    for (std::size_t k = size_ - 1; k > i; --k) std::swap((*this)[k], (*this)[k - 1]);
  }
  void pop_front() {
    ring_[head_] = T{};
    head_ = (head_ + 1) & (ring_.size() - 1);
    --size_;
  }

 private:
  void grow() {
    std::vector<T> bigger(ring_.empty() ? 4 : 2 * ring_.size());
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = std::move((*this)[i]);
    ring_.swap(bigger);
    head_ = 0;
  }

  std::vector<T> ring_;
  std::size_t head_ = 0, size_ = 0;
};

}  // namespace kbsim
