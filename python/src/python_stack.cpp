#include "python_stack.hpp"

#include <pybind11/stl.h>

#include <boost/context/fiber.hpp>
#include <boost/context/fixedsize_stack.hpp>
#include <utility>

#include "channel.hpp"

namespace py = pybind11;
namespace bctx = boost::context;

namespace kbsim::python {

namespace {

/// A thread's Python stack: a fiber that runs one function at a time and comes back.
class PythonStack {
 public:
  void run(const std::function<void()>& fn) {
    if (inside_) return fn();  // already on it
    fn_ = &fn;
    if (!fiber_)
      fiber_ = bctx::fiber(std::allocator_arg, bctx::fixedsize_stack(8 << 20), [this](bctx::fiber&& caller) {
        caller_ = std::move(caller);
        for (;;) {
          try {
            (*fn_)();
          } catch (const bctx::detail::forced_unwind&) {
            throw;
          } catch (...) {
            error_ = std::current_exception();
          }
          caller_ = std::move(caller_).resume();
        }
        return std::move(caller_);
      });
    inside_ = true;
    fiber_ = std::move(fiber_).resume();
    inside_ = false;
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  bctx::fiber fiber_, caller_;
  const std::function<void()>* fn_ = nullptr;
  bool inside_ = false;
  std::exception_ptr error_;
};

}  // namespace

void on_python_stack(const std::function<void()>& fn) {
  thread_local auto* stack = new PythonStack();  // never destroyed: it may hold nothing but a parked fiber
  stack->run(fn);
}

void call_python(const std::string& file, const std::function<void()>& fn) {
  on_python_stack([&] {
    const PythonLock gil;
    std::string message;
    int code = 0;
    try {
      fn();
      return;
    } catch (const py::cast_error& e) {  // a value Python returned that the caller cannot take
      message = file + ": " + e.what();
    } catch (py::error_already_set& e) {
      py::object error = e.value();
      if (e.trace()) error.attr("__traceback__") = e.trace();  // where it was raised, for its file:line
      std::tie(message, code) =
          py::module_::import("kbsim._plugins").attr("fault")(error, file).cast<std::pair<std::string, int>>();
    }
    throw_as(code, message);
  });
}

}  // namespace kbsim::python
