// Compute slots (kbsim/pe/slots.hpp): named counting semaphores of one system.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kbsim/fifo.hpp"
#include "kbsim/pe/slots.hpp"

namespace kbsim::pe_services {

class SlotPool final : public Slots {
 public:
  explicit SlotPool(Simulator& sim) : sim_(sim) {}
  static SlotPool* create(System&, Simulator& sim) { return new SlotPool(sim); }

  std::uint32_t slot(std::string_view name, std::uint32_t capacity) override;
  void acquire(std::uint32_t slot, NodeIndex self, std::uint64_t tag, Ref<Message> msg) override;
  void release(std::uint32_t slot) override;

 private:
  struct Waiter {
    NodeIndex node;
    std::uint64_t tag;
    Ref<Message> msg;
  };
  struct Slot {
    std::string name;
    std::uint32_t capacity = 1, in_use = 0;
    Fifo<Waiter> waiters;
  };
  void grant(Waiter w);

  Simulator& sim_;
  std::vector<Slot> slots_;
  std::map<std::string, std::uint32_t, std::less<>> by_name_;  ///< a system's PEs ask for thousands of slots
};

}  // namespace kbsim::pe_services
