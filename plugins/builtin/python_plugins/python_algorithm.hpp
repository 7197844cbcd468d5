// A CCL algorithm declared by a Python plugin file (kbsim/_ccl.py): a ccl::Algorithm whose wiring, launch and
// min_slot_size call the Python object's, on the thread's Python stack with the interpreter's lock, whatever fiber
// the runtime calls from. What the Python code raises is thrown as the kbsim error it is, or as the plugin's fault
// naming file.py:line (the distributed runtime adds the algorithm, the rank and the time).
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "kbsim/pe/ccl.hpp"

namespace kbsim::python {

class PythonAlgorithm final : public ccl::Algorithm {
 public:
  PythonAlgorithm(std::string file, const std::string& name);
  ~PythonAlgorithm() override;
  PythonAlgorithm(const PythonAlgorithm&) = delete;
  PythonAlgorithm& operator=(const PythonAlgorithm&) = delete;

  std::vector<ccl::Wire> wiring(const ccl::Setup& setup) const override;
  ccl::Launch launch(const ccl::Collective& c) const override;
  std::uint64_t min_slot_size(const ccl::Collective& c) const override;

 private:
  std::string file_;
  pybind11::object obj_;  // kbsim._ccl._Instance
};

}  // namespace kbsim::python
