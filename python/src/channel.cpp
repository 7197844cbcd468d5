#include "channel.hpp"

#include <chrono>
#include <cstdio>

#include "kbsim/errors.hpp"

namespace py = pybind11;

namespace kbsim::python {

namespace {

/// Thrown in a worker when Python closed the channel mid-spawn (not a std::exception: the spawn unwinds).
struct Closed {};

py::dict& error_types() {
  static py::dict* types = new py::dict();  // lives as long as the interpreter (never destroyed at exit)
  return *types;
}

}  // namespace

void throw_as(int code, const std::string& what) {
  switch (static_cast<ExitCode>(code)) {  // a kbsim error Python raised itself is that error
    case ExitCode::kUsage: throw UsageError(what);
    case ExitCode::kConfig: throw ConfigError(what);
    case ExitCode::kSim: throw SimError(what);
    case ExitCode::kBench: throw BenchError("PYTHON_BENCH", what);
    case ExitCode::kPlugin: throw PluginError(what);
    default: throw PythonFault(what);
  }
}

void set_error(int code, const std::string& message) {
  py::object type = error_types().contains(py::int_(code)) ? error_types()[py::int_(code)]
                                                           : py::reinterpret_borrow<py::object>(PyExc_RuntimeError);
  PyErr_SetObject(type.ptr(), py::make_tuple(message, code).ptr());
}

void raise(int code, const std::string& message) {
  set_error(code, message);
  throw py::error_already_set();
}

void register_errors(const py::dict& types) { error_types() = types; }

rt::Runtime& Channel::runtime() {
  used_system_ = true;
  if (!rt_) rt_ = &ctx_->configured().service<rt::Runtime>();
  return *rt_;
}

rt::Distributed& Channel::distributed() {
  used_system_ = true;
  if (auto* d = ctx_->configured().find<rt::Distributed>()) return *d;
  throw ConfigError("no plugin provides the distributed runtime (service 'distributed')");
}

std::string Channel::sim_time() const {
  if (!used_system_) return "";
  char text[64];
  std::snprintf(text, sizeof text, "%.3f ns", static_cast<double>(ctx_->configured().now()) / 1000.0);
  return text;
}

void Channel::start() {
  const Event first = next_event();
  if (first.kind == Event::kEnded) {
    end();
    rethrow_kept();
    raise(first.code ? first.code : static_cast<int>(ExitCode::kInternal),
          first.message.empty() ? "the run ended before it started" : first.message);
  }
  unanswered_ = first;
  rethrow_kept();
}

Event Channel::order(Order o) {
  if (ended_) raise(static_cast<int>(ExitCode::kUsage), "this kbsim run has ended");
  if (in_order_)
    raise(static_cast<int>(ExitCode::kUsage), "a kbsim run takes one call at a time (another thread is in one)");
  in_order_ = true;
  struct Leave {
    bool& flag;
    ~Leave() { flag = false; }
  } leave{in_order_};
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
  rethrow_kept();  // what a signal handler raised meanwhile (the run was stopped), now the event is in place
  return e;
}

Event Channel::next_event() {
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
    check_signals();  // Ctrl-C: the running call stops at the next heartbeat (or, as it ended, is not lost)
    if (got) return *got;
  }
}

void Channel::post_end(int code, const std::string& error) {
  const std::lock_guard<std::mutex> lock(m_);
  event_ = Event{Event::kEnded, kDriver, code, error};
  closing_ = true;
  cv_.notify_all();
}

void Channel::abandon(std::string message, int code) {
  const std::lock_guard<std::mutex> lock(m_);
  if (last_ || closing_) return;
  last_ = Order{Order::kRaise, kDriver, nullptr, std::move(message), code};
  cv_.notify_all();
}

void Channel::post_close() {
  const std::lock_guard<std::mutex> lock(m_);
  order_ = Order{Order::kClose, kDriver, nullptr, {}, 0};
  cv_.notify_all();
}

Order Channel::exchange(Event event, int executor) {
  std::unique_lock<std::mutex> lock(m_);
  if (closing_) return Order{Order::kClose, executor, nullptr, {}, 0};
  event_ = std::move(event);
  cv_.notify_all();
  cv_.wait(lock, [this] { return order_.has_value() || last_.has_value(); });
  if (!order_) return *last_;  // Python is done: every wait from now on gets its last word
  Order o = std::move(*order_);
  order_.reset();
  if (o.kind == Order::kClose) {
    closing_ = true;
    return o;
  }
  if (o.executor != executor)
    throw std::logic_error("kbsim python channel: an order for worker " + std::to_string(o.executor) +
                           " while worker " + std::to_string(executor) + " waits");
  return o;
}

void Channel::serve(BenchContext& ctx, bool build) {
  ctx_ = &ctx;
  if (build) {
    ctx.configured();  // the system is built before Python goes on: its errors are the session's start's
    used_system_ = true;
  }
  Event ev{Event::kStart, kDriver, 0, {}};
  for (;;) {
    Order o = exchange(std::move(ev), kDriver);
    if (o.kind == Order::kClose) return;
    if (o.kind == Order::kRaise) {
      const std::lock_guard<std::mutex> lock(m_);
      closing_ = true;  // Python's driver is done: nothing more is asked of it
      const std::string at = sim_time();
      const std::string what = o.message + (at.empty() ? "" : " (at sim time " + at + ")");
      throw_as(o.code, what);
    }
    if (o.kind != Order::kCall || !o.call) throw std::logic_error("kbsim python channel: the driver was given no call");
    o.call->work(*this, *o.call);
    ev = Event{Event::kDone, kDriver, 0, {}};
  }
}

void Channel::spawn(unsigned n) {
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
            throw std::logic_error("kbsim python channel: worker " + std::to_string(me) + " was given no call");
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
