// kbsim.Session (docs/python.md, "A live system"): a `kbsim run` of the host bench "python-session" kept open on a
// thread of its own while Python drives its configured system's host runtime and distributed runtime.
//
// Python never runs on the session's thread, and the simulation never runs while Python does: each runtime call
// Python makes is a Call, handed to the session's thread and run there (in the driver, or in the spawn worker of
// its rank) while the interpreter's thread waits; the session's thread then hands back an Event and waits for the
// next order. So a worker's Python function runs as a greenlet on the interpreter's thread, and what it asks for
// runs on that rank's C++ worker, which blocks, yields and runs the simulation exactly as a C++ bench's worker
// does: the same calls give the same simulated times.
#pragma once

#include <pybind11/pybind11.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "job.hpp"
#include "kbsim/bench.hpp"
#include "kbsim/rt/distributed.hpp"
#include "kbsim/rt/runtime.hpp"

namespace kbsim::python {

/// Where a call runs: the session's driver, or the spawn worker of a rank (>= 0).
inline constexpr int kDriver = -1;

class Session;

/// One runtime call from Python, run on the session's thread: `work` fills in what it gives.
struct Call {
  std::function<void(Session&, Call&)> work;
  rt::Tensor tensor;
  rt::LaunchHandle handle;
  rt::LaunchResult launch;
  rt::TransferResult transfer;
  std::vector<std::byte> bytes;
  std::vector<double> values;
  std::vector<rt::CollectiveResult> collectives;
  struct Device {  ///< the caller's device and the simulated time (ps)
    unsigned device = 0, cubes_per_sip = 0, pes_per_cube = 0;
    Tick now = 0;
  } device;
  struct Group {  ///< the process group as the caller sees it
    bool initialized = false;
    unsigned rank = 0, world_size = 0;
  } group;
  std::string text;
};

/// What the session's thread hands back.
struct Event {
  enum Kind : int { kDone = 0, kStart = 1, kCancelled = 2, kEnded = 3 };
  Kind kind = kDone;
  int executor = kDriver;  ///< whose call is done; the worker that starts or was cancelled
  int code = 0;            ///< kEnded: the run's exit code, and its error (empty when none)
  std::string message;
};

/// What Python hands over: a call to run, or what became of a worker's Python function, or the end.
struct Order {
  enum Kind : int { kCall = 0, kReturn = 1, kRaise = 2, kAck = 3, kClose = 4 };
  Kind kind = kCall;
  int executor = kDriver;
  std::shared_ptr<Call> call;
  std::string message;  ///< kRaise: what the Python function raised
};

class Session {
 public:
  /// Start `kbsim run --bench python-session ARGS...` and wait until its system is built (or raise its error).
  explicit Session(std::vector<std::string> args);
  /// Not closed: the run is ended without its results (its summary not printed).
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Python's side: hand over `order` and wait for the next event, watching for Ctrl-C meanwhile. One at a time:
  /// a second thread's order while one is under way raises kbsim.UsageError.
  Event order(Order order);
  /// The event Python holds and has not answered yet (Python unwinding a spawn answers it), if any.
  std::optional<Event> unanswered() const { return unanswered_; }
  /// Whether its run has ended (closed, failed, or stopped while Python's own exception was raised).
  bool ended() const noexcept { return ended_; }

  /// The session's side: what its calls run against.
  BenchContext& ctx() { return *ctx_; }
  /// The host runtime, made on first use (a session that never uses it is no bench that "submitted no work").
  rt::Runtime& runtime();
  rt::Distributed& distributed();
  /// The bench's body: run the driver's calls until Python closes the session.
  void serve(BenchContext& ctx);
  /// A spawn of `n` workers whose functions are Python's (the worker of rank r runs the calls of Python's rank r).
  void spawn(unsigned n);

 private:
  /// Hand `event` to Python and wait for its next order, which must be for `executor`. Once Python has closed the
  /// session (kClose), every exchange returns kClose at once: the run unwinds without Python.
  Order exchange(Event event, int executor);
  Event next_event();
  /// The run has ended (or is told to): wait for its thread, and let another run start.
  void end();

  std::mutex m_;
  std::condition_variable cv_;
  std::optional<Event> event_;
  std::optional<Order> order_;
  bool closing_ = false;  ///< Python closed it: the session's thread asks Python nothing more
  bool ended_ = false;
  bool in_order_ = false;            ///< a Python thread is in order()
  std::optional<Event> unanswered_;  ///< the last event Python was handed, until its next order
  Watcher watcher_;                  ///< what Python's signal handlers raised while it waited
  BenchContext* ctx_ = nullptr;
  rt::Runtime* rt_ = nullptr;
  std::unique_ptr<Job> job_;
};

/// Register the host bench "python-session" with the command line (once, at import).
void add_session_bench();
/// The Session, Event, Call, Tensor and Placement classes of the _kbsim module, and the event and order kinds.
void bind_session(pybind11::module_& m);

}  // namespace kbsim::python
