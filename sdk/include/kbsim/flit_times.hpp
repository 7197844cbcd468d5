// The times of a message's flits at one place, in closed form: what lets a flit train cross a transit as one event
// (docs/architecture.md, "Flit trains advanced as a whole").
//
// A message of n flits is n - 1 full flits and a last one that may be shorter. Where it crosses links and serial
// workers that nothing else uses meanwhile, the time of flit i at any place is a max-plus expression of i:
//
//   t(0) and t(n-1) on their own (the first pays a transaction's overhead, the last has its own size), and
//   t(i) = max over pieces k of (c_k + i * s_k)  for 1 <= i <= n-2.
//
// A link adds a piece of its own slope (a full flit's serialization) and a worker one of slope 0, so a piece's slope
// is one of the links' on the way: a handful. Every operation is exact integer arithmetic on picoseconds; one that
// would need more pieces than a FlitTimes holds says so (an empty optional), and the caller takes flits one by one.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include "kbsim/time.hpp"

namespace kbsim {

class FlitTimes {
 public:
  static constexpr std::size_t kMaxPieces = 6;

  FlitTimes() = default;
  /// `n` flits leaving back to back from `start` over a link of full-flit serialization `full` and latency
  /// `latency`, the last flit taking `last`: each flit's time is when it has wholly arrived.
  static FlitTimes train(std::uint32_t n, Tick start, Tick full, Tick last, Tick latency) {
    FlitTimes f;
    f.n_ = n;
    const Tick base = start + latency;
    f.first_ = base + (n > 1 ? full : last);
    f.last_ = base + Tick{n - 1} * full + last;
    if (n > 2) f.add({static_cast<std::int64_t>(base + full), full});
    return f;
  }

  /// `n` flits at `first`, `last`, and between them at `c + i * slope`.
  static FlitTimes affine(std::uint32_t n, Tick first, std::int64_t c, Tick slope, Tick last) {
    FlitTimes f;
    f.n_ = n;
    f.first_ = first;
    f.last_ = n > 1 ? last : first;
    if (n > 2) f.add({c, slope});
    return f;
  }

  std::uint32_t size() const noexcept { return n_; }
  Tick front() const noexcept { return first_; }
  Tick back() const noexcept { return last_; }
  /// The time of flit `i` (< size()).
  Tick at(std::uint32_t i) const noexcept {
    if (i == 0) return first_;
    if (i + 1 == n_) return last_;
    std::int64_t t = pieces_[0].at(i);
    for (std::size_t k = 1; k < count_; ++k) t = std::max(t, pieces_[k].at(i));
    return static_cast<Tick>(t);
  }
  /// The first flit whose time is >= `t` (size() if none).
  std::uint32_t first_at_or_after(Tick t) const noexcept {
    std::uint32_t lo = 0, hi = n_;
    while (lo < hi) {
      const std::uint32_t mid = lo + (hi - lo) / 2;
      if (at(mid) < t)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }

  /// Every time later by `d`.
  FlitTimes shifted(Tick d) const noexcept {
    FlitTimes f = *this;
    f.first_ += d;
    f.last_ += d;
    for (std::size_t k = 0; k < f.count_; ++k) f.pieces_[k].c += static_cast<std::int64_t>(d);
    return f;
  }
  /// The same, the first flit later by `first`, the last by `last` and the others by `middle` (a link's
  /// serialization and latency: the first and last flits may have sizes of their own).
  FlitTimes shifted(Tick first, Tick middle, Tick last) const noexcept {
    FlitTimes f = shifted(middle);
    f.first_ = first_ + first;
    f.last_ = last_ + last;
    return f;
  }

  /// Through one serial worker, free from `free`, that takes each flit when it has arrived and the worker is free
  /// and holds it `first_extra` on the first flit only (a transaction's overhead): when each flit is done.
  std::optional<FlitTimes> served(Tick free, Tick first_extra) const noexcept {
    FlitTimes f = *this;
    f.first_ = std::max(first_, free) + first_extra;
    f.last_ = n_ > 1 ? std::max(last_, f.first_) : f.first_;
    if (n_ > 2 && !f.add({static_cast<std::int64_t>(f.first_), 0})) return std::nullopt;
    return f;
  }

  /// Onto a first-come link free from `busy`, each flit handed over at its time and occupying the link `full`
  /// (every flit but the last: that one's time on the link is the caller's): when each flit starts on the link.
  std::optional<FlitTimes> link_starts(Tick busy, Tick full) const noexcept {
    FlitTimes f;
    f.n_ = n_;
    f.first_ = std::max(first_, busy);
    // A flit starts when it is handed over or when the one before has left: st(i) = max(t(i), st(i-1) + full).
    // Unrolled, st(i) = max(st(0) + i * full, max over 1 <= j <= i of t(j) + (i - j) * full); over a piece of slope
    // s the inner max is at j = i when s >= full, else at j = 1.
    if (n_ > 2) {
      if (!f.add({static_cast<std::int64_t>(f.first_), full})) return std::nullopt;
      for (std::size_t k = 0; k < count_; ++k) {
        const Piece& p = pieces_[k];
        const Piece q =
            p.s >= full ? p : Piece{p.c + static_cast<std::int64_t>(p.s) - static_cast<std::int64_t>(full), full};
        if (!f.add(q)) return std::nullopt;
      }
    }
    f.last_ = n_ > 1 ? std::max(last_, (n_ > 2 ? f.at(n_ - 2) : f.first_) + full) : f.first_;
    return f;
  }

 private:
  struct Piece {
    std::int64_t c;
    Tick s;
    std::int64_t at(std::uint32_t i) const noexcept { return c + static_cast<std::int64_t>(Tick{i} * s); }
  };
  /// Add a piece valid on 1 <= i <= n-2, dropping what another piece bounds there; false if it does not fit.
  bool add(Piece p) noexcept {
    const std::uint32_t lo = 1, hi = n_ - 2;
    auto covers = [&](const Piece& a, const Piece& b) { return a.at(lo) >= b.at(lo) && a.at(hi) >= b.at(hi); };
    for (std::size_t k = 0; k < count_; ++k)
      if (covers(pieces_[k], p)) return true;
    std::size_t kept = 0;
    for (std::size_t k = 0; k < count_; ++k)
      if (!covers(p, pieces_[k])) pieces_[kept++] = pieces_[k];
    count_ = kept;
    if (count_ == kMaxPieces) return false;
    pieces_[count_++] = p;
    return true;
  }

  std::uint32_t n_ = 0;
  std::uint32_t count_ = 0;
  Tick first_ = 0, last_ = 0;
  std::array<Piece, kMaxPieces> pieces_{};
};

}  // namespace kbsim
