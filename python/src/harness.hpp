// The SDK's component harness (kbsim/testing.hpp) for pytest: kbsim.testing.Harness tests one component, a block
// written in Python or any loaded one, against neighbours that record what reaches them.
#pragma once

#include <pybind11/pybind11.h>

namespace kbsim::python {

void bind_harness(pybind11::module_& m);

}  // namespace kbsim::python
