// Kernels written in Python (sdk/README.md, "Write it in Python"). A Python kernel runs as a greenlet on the
// simulation thread's Python stack (on_python_stack), never on the PE's fiber: the kernel's fiber asks its Program
// to run one step of the greenlet outside it (tl::Program::outside), the step runs the Python code until its next
// tl call and hands that call back as a TlCall, and the fiber makes the call, blocking exactly as a C++ kernel's
// call does. So each tl call
// issues the same PE commands as the C++ call of the same name, at the same simulated times.
#pragma once

#include <pybind11/pybind11.h>

#include <functional>
#include <memory>
#include <string>

#include "kbsim/tl/tl.hpp"
#include "python_stack.hpp"

namespace kbsim::python {

/// One tl call of a Python kernel, made on the kernel's fiber: `work` fills in what it gives.
struct TlCall {
  std::function<void(tl::Program&, TlCall&)> work;
  tl::Tensor tensor;
  tl::Handle handle;
  tl::RecvFuture future;
  std::int64_t value = 0;
};

/// The kernel `name` that `file` declares (kbsim/_plugins.py keeps its function).
tl::KernelFn python_kernel(std::string file, std::string name);

/// The classes Python kernels use: TlTensor, TensorArg and TlCall (its factories, one per tl call).
void bind_tl(pybind11::module_& m);

}  // namespace kbsim::python
