#include "session.hpp"

#include <chrono>

#include "cli/common.hpp"
#include "kbsim/errors.hpp"
#include "sim/watch.hpp"

namespace py = pybind11;

namespace kbsim::python {

namespace {

thread_local Session* t_session = nullptr;  // the session whose run this thread runs

/// Thrown in a worker when Python closed the session mid-spawn (not a std::exception: the spawn unwinds).
struct Closed {};

class SessionBench final : public Bench {
 public:
  static BenchInfo info() {
    BenchInfo i{"python-session",
                "the system a kbsim.Session drives from Python (open one with kbsim.Session(); not for the command "
                "line)",
                {}};
    i.reads_topology = true;
    return i;
  }
  void run(BenchContext& ctx) override {
    if (!t_session)
      throw BenchError("BAD_USE", "python-session is kbsim.Session's bench: open a kbsim.Session from Python");
    t_session->serve(ctx);
  }
};

}  // namespace

void add_session_bench() {
  cli::add_host_bench({SessionBench::info(), []() -> Bench* { return new SessionBench(); }});
}

Session::Session(std::vector<std::string> args) {
  args.insert(args.begin(), {"run", "--bench", "python-session"});
  job_ = std::make_unique<Job>(
      std::move(args), /*quiet=*/false, [this] { t_session = this; },
      [this](int code, const std::string& error) {
        const std::lock_guard<std::mutex> lock(m_);
        event_ = Event{Event::kEnded, kDriver, code, error};
        cv_.notify_all();
      });
  const Event first = next_event();
  if (first.kind == Event::kEnded) {
    end();
    watcher_.rethrow();
    raise(first.code ? first.code : static_cast<int>(ExitCode::kInternal),
          first.message.empty() ? "the session ended before it started" : first.message);
  }
  unanswered_ = first;
  watcher_.rethrow();
}

Session::~Session() {
  if (!ended_) {
    const Silenced silenced;  // the run's summary is not printed for a session nobody closed
    {
      const std::lock_guard<std::mutex> lock(m_);
      order_ = Order{Order::kClose, kDriver, nullptr, {}};
      cv_.notify_all();
    }
    end();
  }
}

void Session::end() {
  ended_ = true;
  unanswered_.reset();
  if (job_) {
    py::gil_scoped_release unlocked;
    job_.reset();  // the run's thread has ended or is ending: another run may start
  }
}

rt::Runtime& Session::runtime() {
  if (!rt_) rt_ = &ctx_->configured().service<rt::Runtime>();
  return *rt_;
}

rt::Distributed& Session::distributed() {
  if (auto* d = ctx_->configured().find<rt::Distributed>()) return *d;
  throw ConfigError("no plugin provides the distributed runtime (service 'distributed')");
}

Event Session::order(Order o) {
  if (ended_) raise(static_cast<int>(ExitCode::kUsage), "this kbsim.Session has ended");
  if (in_order_)
    raise(static_cast<int>(ExitCode::kUsage), "a kbsim.Session takes one call at a time (another thread is in one)");
  in_order_ = true;
  struct Leave {
    bool& flag;
    ~Leave() { flag = false; }
  } leave{in_order_};
  // The run's printed summary, once the bench has returned, is not Python's to see (results.json has it all).
  std::optional<Silenced> silenced;
  if (o.kind == Order::kClose) silenced.emplace();
  unanswered_.reset();
  {
    const std::lock_guard<std::mutex> lock(m_);
    order_ = std::move(o);
    cv_.notify_all();
  }
  Event e = next_event();
  if (e.kind == Event::kEnded) {
    end();
  } else {
    unanswered_ = e;
  }
  watcher_.rethrow();  // what a signal handler raised meanwhile (the run was stopped), now the event is in place
  return e;
}

Event Session::next_event() {
  Watcher& watcher = watcher_;
  for (;;) {
    std::optional<Event> got;
    {
      py::gil_scoped_release unlocked;
      std::unique_lock<std::mutex> lock(m_);
      if (cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return event_.has_value(); })) {
        got = std::move(event_);
        event_.reset();
      }
    }
    if (got) {
      watcher.check_signals();  // a Ctrl-C that came as the call ended: the run stops (it is not lost to Python)
      return *got;
    }
    watcher.check_signals();  // Ctrl-C: the running call stops at the next heartbeat and the session ends
  }
}

Order Session::exchange(Event event, int executor) {
  std::unique_lock<std::mutex> lock(m_);
  if (closing_) return Order{Order::kClose, executor, nullptr, {}};
  event_ = std::move(event);
  cv_.notify_all();
  cv_.wait(lock, [this] { return order_.has_value(); });
  Order o = std::move(*order_);
  order_.reset();
  if (o.kind == Order::kClose) {
    closing_ = true;
    return o;
  }
  if (o.executor != executor)
    throw std::logic_error("kbsim.Session: an order for worker " + std::to_string(o.executor) + " while worker " +
                           std::to_string(executor) + " waits");
  return o;
}

void Session::serve(BenchContext& ctx) {
  ctx_ = &ctx;
  ctx.configured();  // the system is built before Python goes on: its errors are the session's start's
  Event ev{Event::kStart, kDriver, 0, {}};
  for (;;) {
    Order o = exchange(std::move(ev), kDriver);
    if (o.kind == Order::kClose) return;
    if (o.kind != Order::kCall || !o.call) throw std::logic_error("kbsim.Session: the driver was given no call");
    try {
      o.call->work(*this, *o.call);
    } catch (...) {
      if (core::watch::stop_requested()) return;  // interrupted: what the session reached is its result
      throw;
    }
    ev = Event{Event::kDone, kDriver, 0, {}};
  }
}

void Session::spawn(unsigned n) {
  distributed().spawn(
      [this](unsigned rank) {
        const int me = static_cast<int>(rank);
        Event ev{Event::kStart, me, 0, {}};
        for (;;) {
          Order o = exchange(std::move(ev), me);
          if (o.kind == Order::kClose) throw Closed{};  // Python is gone: the spawn unwinds
          if (o.kind == Order::kReturn) return;
          if (o.kind == Order::kRaise) throw BenchError("PYTHON_ERROR", o.message);
          if (o.kind != Order::kCall || !o.call)
            throw std::logic_error("kbsim.Session: worker " + std::to_string(me) + " was given no call");
          try {
            o.call->work(*this, *o.call);
          } catch (const std::exception&) {
            throw;  // this worker's failure: the spawn ends the others and reports it
          } catch (...) {
            // The spawn ends early (another worker failed): Python ends this worker's function too, then its C++
            // worker unwinds.
            exchange(Event{Event::kCancelled, me, 0, {}}, me);
            throw;
          }
          ev = Event{Event::kDone, me, 0, {}};
        }
      },
      n);
}

}  // namespace kbsim::python
