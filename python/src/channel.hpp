// The meeting point of Python code and a running bench (docs/python.md, "How it works"): Python never runs on the
// bench's thread, and the simulation never runs while Python does. Each runtime call Python makes is a Call, handed
// to the bench's thread and run there (in the driver, or in the spawn worker of its rank) while the Python thread
// waits; the bench's thread then hands back an Event and waits for the next Order. A spawn worker's Python function
// runs as a greenlet on the Python thread, and what it asks for runs on that rank's C++ worker, which blocks, yields
// and runs the simulation exactly as a C++ bench's worker does: the same calls give the same simulated times.
//
// A kbsim.Session (session.hpp) drives a channel served by its own bench; a bench written in Python
// (plugins/builtin/python_plugins) serves one for its run() function. SDK headers only: the embedding plugin links
// this code too.
#pragma once

#include <pybind11/pybind11.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kbsim/bench.hpp"
#include "kbsim/rt/distributed.hpp"
#include "kbsim/rt/runtime.hpp"

namespace kbsim::python {

/// Where a call runs: the bench's driver, or the spawn worker of a rank (>= 0).
inline constexpr int kDriver = -1;

class Channel;

/// One runtime call from Python, run on the bench's thread: `work` fills in what it gives.
struct Call {
  std::function<void(Channel&, Call&)> work;
  rt::Tensor tensor;
  rt::LaunchHandle handle;
  rt::LaunchResult launch;
  rt::TransferResult transfer;
  std::vector<std::byte> bytes;
  std::vector<double> values;
  std::vector<rt::CollectiveResult> collectives;
  std::vector<PointResult> points;
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

/// What the bench's thread hands back.
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
  int code = 0;         ///< kRaise: the exit code of the kbsim error it raised (kbsim.BenchError: 6), 0 for another
};

/// What the driver's Python code raised (Order::kRaise): the bench ends with it, as a C++ bench's exception.
class PythonFault : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Throw what Python raised as C++: the kbsim error of exit code `code` (kbsim.BenchError: 6, ...), or, for any other
/// exception (code 0), a PythonFault: the plugin's fault.
[[noreturn]] void throw_as(int code, const std::string& what);

class Channel {
 public:
  Channel() = default;
  virtual ~Channel() = default;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // Python's side.

  /// Wait for the bench's first event (kStart, or kEnded if it failed before it started); raise the run's error.
  void start();
  /// Hand over `order` and wait for the next event. One at a time: a second thread's order while one is under way
  /// raises kbsim.UsageError.
  Event order(Order order);
  /// The event Python holds and has not answered yet (Python unwinding a spawn answers it), if any.
  std::optional<Event> unanswered() const { return unanswered_; }
  /// Whether its run has ended (closed, failed, or stopped while Python's own exception was raised).
  bool ended() const noexcept { return ended_; }

  // The bench's side.

  BenchContext& ctx() { return *ctx_; }
  /// The host runtime, made on first use (a bench that never uses it is no bench that "submitted no work").
  rt::Runtime& runtime();
  rt::Distributed& distributed();
  /// The simulated time of the configured system, if Python used it ("" otherwise): for an error's message.
  std::string sim_time() const;
  /// Run the driver's calls until Python closes the channel (or raises: PythonFault). `build`: the configured
  /// system is built before Python goes on (a session's start reports its errors).
  void serve(BenchContext& ctx, bool build);
  /// A spawn of `n` workers whose functions are Python's (the worker of rank r runs the calls of Python's rank r).
  void spawn(unsigned n);
  /// The bench has ended, with `code` and `error` (empty when none): Python's next wait returns kEnded.
  void post_end(int code, const std::string& error);
  /// Python's side, never raising nor waiting: the driver's Python code is done (it raised `message`, with the exit
  /// code of the kbsim error it was, or 0): every wait of the bench's thread from now on gets this kRaise, whatever
  /// other Python thread is in a call meanwhile. Only the first call counts.
  void abandon(std::string message, int code);

 protected:
  /// Called about every 100 ms while Python waits, and when its event comes (a session watches for Ctrl-C).
  virtual void check_signals() {}
  /// Raise what was kept while Python waited (a session's signal handlers), if anything.
  virtual void rethrow_kept() {}
  /// The run has ended (kEnded reached Python).
  virtual void end() {
    ended_ = true;
    unanswered_.reset();
  }
  Event next_event();
  /// Tell the bench's thread Python is gone (its next exchange sees kClose).
  void post_close();

  bool ended_ = false;
  std::optional<Event> unanswered_;  ///< the last event Python was handed, until its next order

 private:
  /// Hand `event` to Python and wait for its next order, which must be for `executor`. Once Python has closed the
  /// channel (kClose), every exchange returns kClose at once: the bench unwinds without Python.
  Order exchange(Event event, int executor);

  std::mutex m_;
  std::condition_variable cv_;
  std::optional<Event> event_;
  std::optional<Order> order_;
  bool closing_ = false;       ///< Python closed it: the bench's thread asks Python nothing more
  bool in_order_ = false;      ///< a Python thread is in order()
  std::optional<Order> last_;  ///< abandon()'s order
  BenchContext* ctx_ = nullptr;
  rt::Runtime* rt_ = nullptr;
  bool used_system_ = false;
};

/// Raise the Python exception kbsim's exit code `code` maps to (kbsim.Error's subclasses), with `message`.
[[noreturn]] void raise(int code, const std::string& message);
/// The same, as Python's error indicator (an exception translator's way).
void set_error(int code, const std::string& message);
/// Hand over the exit code -> exception class table (kbsim/_errors.py).
void register_errors(const pybind11::dict& types);

/// A shape (1 to 4 positive dims) and a dtype by name from Python: ValueError otherwise.
Shape shape_of(const std::vector<std::int64_t>& dims);
DType dtype_of(const std::string& name);

/// The Tensor, Placement, Call, Event and Channel classes, the event and order kinds, and _register_errors.
void bind_calls(pybind11::module_& m);
/// A dict of metrics from Python (numbers, strings, dicts and lists of them) into `out`; a value of another type
/// raises TypeError naming its key. Needs the interpreter's lock.
void fill_metrics(Metrics& out, const pybind11::handle& values);
/// Parameters as a dict, name -> value (bool, int, float, str). Needs the interpreter's lock.
pybind11::dict params_dict(const Params& params);
/// Declared parameters, as kbsim._plugins.load_file lists them: (name, type, default, help) tuples.
std::vector<ParamSpec> param_specs(const pybind11::list& params);

}  // namespace kbsim::python
