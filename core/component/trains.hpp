// Flit trains advanced as a whole (docs/architecture.md, "Flit trains advanced as a whole"): one record per message
// per node it is on its way to, in a pool with stable addresses. A record says when the message's flits arrive
// at its node (FlitTimes), how events for them are ordered, what its node did with them (took them as a whole, or
// walks them flit by flit with one re-armed event) and, for those taken as a whole, what that did to the out-link and
// where the flits went next, so that a cut can undo it exactly.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "kbsim/component.hpp"
#include "kbsim/flit_times.hpp"

namespace kbsim::core {

struct TrainHop {
  static constexpr std::uint32_t kNone = ~0u;
  Ref<Message> msg;
  FlitTimes arrive;  ///< when each flit has arrived at `to`
  FlitTimes sent;    ///< when `from` handed each over (its handler's time), which orders their events; unless fixed
  /// A source's (a node that hands its own flits over at times it chose: send_train): those times, which its
  /// record's flits are timed by instead of `arrive`; and the next record's `sent` when its node was a source.
  /// (Vectors a record keeps when it is freed: a reused record fills them without allocating.)
  std::vector<Tick> list, sent_list;
  Tick made = 0;          ///< a source's: when it was made (its flits are ordered as timers set then)
  std::uint64_t tag = 0;  ///< a source's: flit i is on_timer(tag + i) when walked
  bool source = false;
  std::uint64_t lane0 = 0;  ///< every flit's lane when `fixed` (a train sent whole keeps its first event's order)
  std::uint32_t root = 0;
  std::uint32_t generation = 0;
  NodeIndex from = 0, to = 0;
  PortIndex port = 0;
  std::uint32_t hop = 0, count = 0, full_bytes = 0, last_bytes = 0;
  std::uint32_t lim = 0;       ///< flits [0, lim) arrive at `arrive`; the rest come one by one
  std::uint32_t whole = 0;     ///< flits [0, whole) `to` advanced as a whole
  std::uint32_t walk = kNone;  ///< the next flit its event walks (kNone: no walk)
  bool fixed = false;
  bool pending = false;  ///< its event has not fired: `to` has not seen it yet
  bool held = false;     ///< `to` holds it (took it as a whole, and has not said done or cut)
  EventId event;         ///< its event, pending or walking
  // What `to` did with flits [0, whole) when it took them as a whole.
  std::uint32_t out = kNone;  ///< the out-link (an index into the wires)
  Tick busy_before = 0;       ///< when that link was free before them
  FlitTimes starts;           ///< when each started on it
  Tick ser_full = 0, ser_last = 0;
  TrainId next;      ///< the record of the next node, when it is flit-aware
  EventId delivery;  ///< the whole message's arrival at the next node, when it takes whole messages
  bool delivers = false;

  /// Back to a fresh record, with the next generation (its times are left: every record sets those it reads).
  void reset() noexcept {
    msg.reset();
    list.clear();
    sent_list.clear();
    ++generation;
    lane0 = made = tag = 0;
    root = from = to = port = hop = count = full_bytes = last_bytes = lim = whole = 0;
    walk = out = kNone;
    fixed = pending = held = delivers = source = false;
    event = delivery = {};
    next = {};
    busy_before = ser_full = ser_last = 0;
  }

  Train view() { return {{}, msg.get(), &arrive, count, lim, whole, hop, full_bytes, last_bytes}; }
  Tick ser(std::uint32_t i) const noexcept { return i + 1 < count ? ser_full : ser_last; }
  /// When flit i is at its node (a source's: when it hands it over).
  Tick time(std::uint32_t i) const noexcept { return list.empty() ? arrive.at(i) : list[i]; }
  /// The first flit whose time is >= t.
  std::uint32_t first_at_or_after(Tick t) const noexcept {
    if (list.empty()) return arrive.first_at_or_after(t);
    return static_cast<std::uint32_t>(std::lower_bound(list.begin(), list.end(), t) - list.begin());
  }
  /// The link time of flits [from, to).
  Tick link_time(std::uint32_t from, std::uint32_t to) const noexcept {
    if (from >= to) return 0;
    return Tick{to - from} * ser_full - (to == count ? ser_full - ser_last : 0);
  }
};

/// The records, with stable addresses (a handler may add one while another is in use) and a free list.
class TrainPool {
 public:
  std::uint32_t add() {
    if (!free_.empty()) {
      const std::uint32_t i = free_.back();
      free_.pop_back();
      return i;
    }
    hops_.emplace_back();
    return static_cast<std::uint32_t>(hops_.size() - 1);
  }
  TrainHop& operator[](std::uint32_t i) noexcept { return hops_[i]; }
  /// The record `id` names, or nullptr when it is stale.
  TrainHop* find(TrainId id) noexcept {
    return id.slot < hops_.size() && hops_[id.slot].generation == id.generation ? &hops_[id.slot] : nullptr;
  }
  TrainId id_of(std::uint32_t i) const noexcept { return {i, hops_[i].generation}; }
  void free(std::uint32_t i) {
    hops_[i].reset();
    free_.push_back(i);
  }
  void clear() {
    hops_.clear();
    free_.clear();
  }

 private:
  std::deque<TrainHop> hops_;
  std::vector<std::uint32_t> free_;
};

}  // namespace kbsim::core
