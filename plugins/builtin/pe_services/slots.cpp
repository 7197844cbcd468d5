#include "slots.hpp"

namespace kbsim::pe_services {

std::uint32_t SlotPool::slot(std::string_view name, std::uint32_t capacity) {
  if (auto it = by_name_.find(name); it != by_name_.end()) {
    const Slot& s = slots_[it->second];
    if (s.capacity != capacity)
      throw SimError("shared resource '" + std::string(name) + "' is asked for with capacity " +
                     std::to_string(capacity) + " but was created with " + std::to_string(s.capacity));
    return it->second;
  }
  if (capacity == 0) throw SimError("shared resource '" + std::string(name) + "' needs a capacity >= 1");
  const auto index = static_cast<std::uint32_t>(slots_.size());
  slots_.push_back({std::string(name), capacity, 0, {}});
  by_name_.emplace(std::string(name), index);
  return index;
}

void SlotPool::grant(Waiter w) {
  if (w.msg) sim_.op_resume(w.node, *w.msg);
  sim_.schedule(w.node, sim_.now(), w.tag, std::move(w.msg), 128);
}

void SlotPool::acquire(std::uint32_t slot, NodeIndex self, std::uint64_t tag, Ref<Message> msg) {
  Slot& s = slots_.at(slot);
  if (s.in_use < s.capacity && s.waiters.empty()) {
    ++s.in_use;
    grant({self, tag, std::move(msg)});
    return;
  }
  s.waiters.push_back({self, tag, std::move(msg)});
}

void SlotPool::release(std::uint32_t slot) {
  Slot& s = slots_.at(slot);
  if (s.in_use == 0) throw SimError("shared resource '" + s.name + "' released more often than acquired");
  if (s.waiters.empty()) {
    --s.in_use;
    return;
  }
  Waiter w = std::move(s.waiters.front());
  s.waiters.pop_front();
  grant(std::move(w));  // the unit passes straight to the next waiter
}

}  // namespace kbsim::pe_services
