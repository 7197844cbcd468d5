#include "workers.hpp"

#include <boost/context/fixedsize_stack.hpp>

#include "kbsim/errors.hpp"

namespace kbsim::host_runtime {

namespace bctx = boost::context;

namespace {

/// The error of rank `r`, of the same kind (and exit code) as the original.
[[noreturn]] void rethrow_for_rank(std::exception_ptr e, unsigned r) {
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
  struct Reset {  // leave no worker behind, however spawn ends (destroying a fiber unwinds it)
    Workers& self;
    ~Reset() {
      self.workers_.clear();
      self.current_ = -1;
      self.barrier_count_ = 0;
    }
  } reset{*this};
  for (unsigned r = 0; r < n; ++r)
    workers_[r].fiber =
        bctx::fiber(std::allocator_arg, bctx::fixedsize_stack(8 << 20), [this, &fn, r](bctx::fiber&& d) {
          driver_ = std::move(d);
          try {
            fn(r);
          } catch (const bctx::detail::forced_unwind&) {
            throw;
          } catch (...) {
            workers_[r].error = std::current_exception();
          }
          return std::move(driver_);
        });

  auto resume = [&](unsigned r) {
    Worker& w = workers_[r];
    w.until = nullptr;
    w.started = true;
    current_ = static_cast<int>(r);
    w.fiber = std::move(w.fiber).resume();
    current_ = -1;
    if (!w.fiber) {
      w.finished = true;
      if (w.error) rethrow_for_rank(w.error, r);
      release_barrier_if_complete();
    }
  };
  for (;;) {
    bool progressed = false;
    for (unsigned r = 0; r < n; ++r) {
      Worker& w = workers_[r];
      if (w.finished || (w.started && w.until && !w.until())) continue;
      resume(r);
      progressed = true;
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

void Workers::block(std::function<bool()> done, std::string what) {
  if (!in_worker() || done()) return;
  Worker& w = workers_[static_cast<std::size_t>(current_)];
  w.until = std::move(done);
  w.what = std::move(what);
  const int me = current_;
  driver_ = std::move(driver_).resume();
  current_ = me;
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
