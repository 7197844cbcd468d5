// Where Python code runs for the simulation (sdk/README.md, "Write it in Python"): every piece of Python a run
// calls (a kernel's greenlet, a block's handler, an algorithm's method) runs on its thread's Python stack, with the
// interpreter's lock, whatever fiber the event loop is on.
#pragma once

#include <pybind11/pybind11.h>

#include <functional>
#include <string>
#include <utility>

namespace kbsim::python {

/// Run `fn` on this thread's Python stack: a stack of its own (a fiber) where every piece of Python code this
/// thread runs for the simulation runs, whatever stack the caller is on (the event loop may run on a spawn
/// worker's fiber). Greenlets switch only within one C stack: here it is always the same one, and Python code run
/// here returns before the caller's stack is back (calls nest: a harness driven from pytest has the test's frames
/// on the main stack meanwhile, which CPython 3.11 allows, as it does a greenlet's switch).
void on_python_stack(const std::function<void()>& fn);

/// Run `fn` (Python code of the plugin file `file`) on this thread's Python stack with the interpreter's lock; a
/// Python exception it raises is thrown as kbsim's (channel.hpp, throw_as), naming `file`'s line.
void call_python(const std::string& file, const std::function<void()>& fn);

/// The interpreter's lock for the simulation's thread, keeping its thread state between steps (a greenlet lives in
/// its thread's state: letting the state go would end every kernel of the thread).
class PythonLock {
 public:
  PythonLock() {
    thread_local bool kept = false;
    if (!std::exchange(kept, true)) acquire_.inc_ref();
  }

 private:
  pybind11::gil_scoped_acquire acquire_;
};

}  // namespace kbsim::python
