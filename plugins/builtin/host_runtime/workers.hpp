// Cooperative workers for rt::Distributed::spawn (docs/model.md, "The
// distributed runtime"): one fiber per rank, switched by the driver in rank
// order. A worker that must wait for the device (a launch, a collective, a
// barrier) blocks: it yields to the driver with a condition; the driver runs
// the others, and when none can go on it runs the simulation until some
// condition holds. Deterministic: the same inputs switch in the same order.
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "kbsim/fiber.hpp"

namespace kbsim::host_runtime {

class Workers {
 public:
  /// Runs the simulation until `done()`; throws with `stuck()` if it goes idle first.
  using RunUntil = std::function<void(const std::function<bool()>& done, const std::function<std::string()>& stuck)>;

  /// Run fn(rank) for ranks 0..n-1 to completion; a failure ends the others and is rethrown naming its rank.
  void spawn(const std::function<void(unsigned)>& fn, unsigned n, const RunUntil& run_until);

  bool in_worker() const noexcept { return current_ >= 0; }
  unsigned rank() const noexcept { return current_ >= 0 ? static_cast<unsigned>(current_) : 0; }
  /// The calling worker's device (the driver's outside spawn).
  void set_device(unsigned sip) noexcept {
    if (current_ < 0) {
      device_ = sip;
      return;
    }
    Worker& w = workers_[static_cast<std::size_t>(current_)];
    w.device = sip;
    w.device_set = true;
  }
  /// Whether the calling worker chose its device (set_device); the driver always has one.
  bool device_chosen() const noexcept {
    return current_ < 0 || workers_[static_cast<std::size_t>(current_)].device_set;
  }
  unsigned device() const noexcept {
    return current_ >= 0 ? workers_[static_cast<std::size_t>(current_)].device : device_;
  }

  /// In a worker: yield until `done()` holds; `what` says what it waits for (stuck reports).
  void block(std::function<bool()> done, std::string what);
  /// A barrier over the live workers (outside spawn: nothing to wait for).
  void barrier();
  /// "rank 1 waits for ...; rank 2 returned" for every worker not finished.
  std::string waiting() const;

 private:
  struct Worker {
    boost::context::fiber fiber;
    std::function<bool()> until;  ///< set while blocked
    std::string what;
    unsigned device = 0;
    bool device_set = false;  ///< set_device was called in it
    bool started = false, finished = false;
    std::exception_ptr error;
    fiber::StackBounds stack;  ///< for AddressSanitizer's fiber annotations
    void* fake_stack = nullptr;
  };
  unsigned live() const;
  void release_barrier_if_complete();
  /// Switch from the driver into worker `r` until it blocks or ends; false when it ended.
  bool enter(unsigned r);
  /// End every worker not finished: each is resumed and its pending wait throws, so its stack unwinds normally.
  void cancel_all();

  std::vector<Worker> workers_;
  int current_ = -1;
  unsigned device_ = 0;
  boost::context::fiber driver_;     ///< the driver, while a worker runs
  fiber::StackBounds driver_stack_;  ///< the driver's stack (AddressSanitizer)
  void* driver_fake_ = nullptr;
  bool cancelling_ = false;
  std::uint64_t barrier_gen_ = 0;
  unsigned barrier_count_ = 0;
};

}  // namespace kbsim::host_runtime
