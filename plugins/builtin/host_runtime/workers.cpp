#include "workers.hpp"

#include "kbsim/errors.hpp"

namespace kbsim::host_runtime {

namespace bctx = boost::context;
using fiber::finish_switch;
using fiber::start_switch;

namespace {

/// Thrown out of a blocked worker's wait when spawn ends early; not a std::exception.
struct Cancelled {};

/// The error of rank `r`, of the same kind (and exit code) as the original.
[[noreturn]] void rethrow_for_rank(const std::exception_ptr& e, unsigned r) {
  const std::string who = "spawn: rank " + std::to_string(r) + ": ";
  try {
    std::rethrow_exception(e);
  } catch (const BenchError& x) {
    throw BenchError(x.reason(), who + std::string(x.what()).substr(x.reason().size() + 2));
  } catch (const ConfigError& x) {
    throw ConfigError(who + x.what());
  } catch (const SimError& x) {
    throw SimError(who + x.what());
  } catch (const Error&) {
    throw;
  } catch (const std::exception& x) {
    throw std::runtime_error(who + x.what());  // the bench's own fault, named as its plugin's by the runner
  } catch (...) {
    throw std::runtime_error(who + "threw an exception that is not a std::exception");
  }
}

}  // namespace

unsigned Workers::live() const {
  unsigned n = 0;
  for (const Worker& w : workers_) n += w.finished ? 0 : 1;
  return n;
}

void Workers::spawn(const std::function<void(unsigned)>& fn, unsigned n, const RunUntil& run_until) {
  if (in_worker() || !workers_.empty()) throw BenchError("BAD_USE", "spawn: workers cannot spawn workers");
  if (n == 0) throw BenchError("BAD_USE", "spawn: nprocs must be at least 1");
  workers_.resize(n);
  for (Worker& w : workers_) w.device = device_;
  struct Reset {  // however spawn ends, every worker has returned before its fiber goes
    Workers& self;
    ~Reset() {
      self.cancel_all();
      self.workers_.clear();
      self.current_ = -1;
      self.barrier_count_ = 0;
      self.cancelling_ = false;
    }
  } reset{*this};
  for (unsigned r = 0; r < n; ++r) {
    Worker& w = workers_[r];
    w.fiber = bctx::fiber(std::allocator_arg, fiber::RecordingStack{bctx::fixedsize_stack(8 << 20), &w.stack},
                          [this, &fn, r](bctx::fiber&& d) {
                            finish_switch(nullptr, &driver_stack_);
                            driver_ = std::move(d);
                            try {
                              if (!cancelling_) fn(r);
                            } catch (const Cancelled&) {  // spawn ends early: nothing to report
                            } catch (...) {
                              workers_[r].error = std::current_exception();
                            }
                            start_switch(nullptr, driver_stack_);
                            return std::move(driver_);
                          });
  }
  for (;;) {
    bool progressed = false;
    for (unsigned r = 0; r < n; ++r) {
      Worker& w = workers_[r];
      if (w.finished || (w.started && w.until && !w.until())) continue;
      progressed = true;
      if (enter(r)) continue;
      if (w.error) rethrow_for_rank(w.error, r);
      release_barrier_if_complete();
    }
    if (live() == 0) return;
    if (progressed) continue;
    run_until(
        [&] {
          for (const Worker& w : workers_)
            if (!w.finished && w.until && w.until()) return true;
          return false;
        },
        [&] { return "spawned workers wait: " + waiting(); });
  }
}

bool Workers::enter(unsigned r) {
  Worker& w = workers_[r];
  w.until = nullptr;
  w.started = true;
  current_ = static_cast<int>(r);
  start_switch(&driver_fake_, w.stack);
  w.fiber = std::move(w.fiber).resume();
  finish_switch(driver_fake_, nullptr);
  current_ = -1;
  if (!w.fiber) w.finished = true;
  return !w.finished;
}

void Workers::cancel_all() {
  cancelling_ = true;
  for (unsigned r = 0; r < workers_.size(); ++r)
    for (int tries = 0; !workers_[r].finished && tries < 1000; ++tries) enter(r);
}

void Workers::block(std::function<bool()> done, std::string what) {
  if (!in_worker() || done()) return;
  Worker& w = workers_[static_cast<std::size_t>(current_)];
  w.until = std::move(done);
  w.what = std::move(what);
  const int me = current_;
  if (cancelling_) throw Cancelled{};
  start_switch(&w.fake_stack, driver_stack_);
  driver_ = std::move(driver_).resume();
  finish_switch(w.fake_stack, &driver_stack_);
  current_ = me;
  if (cancelling_) throw Cancelled{};
}

void Workers::barrier() {
  if (!in_worker()) return;
  const std::uint64_t gen = barrier_gen_;
  ++barrier_count_;
  release_barrier_if_complete();
  block([this, gen] { return barrier_gen_ != gen; },
        "the barrier (" + std::to_string(barrier_count_) + " of " + std::to_string(live()) + " workers there)");
}

void Workers::release_barrier_if_complete() {
  if (barrier_count_ > 0 && barrier_count_ >= live()) {
    barrier_count_ = 0;
    ++barrier_gen_;
  }
}

std::string Workers::waiting() const {
  std::string out;
  for (std::size_t r = 0; r < workers_.size(); ++r) {
    const Worker& w = workers_[r];
    out += (out.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + " " +
           (w.finished ? "returned"
            : w.until  ? "waits for " + w.what
                       : "is running");
  }
  return out;
}

}  // namespace kbsim::host_runtime
