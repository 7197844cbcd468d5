// A bench declared by a Python plugin file: its run() drives the bench's context through a Channel (the package's
// python/src/channel.hpp) while the Python function runs on a thread of its own (kbsim/_plugins.py).
#pragma once

#include <string>

#include "kbsim/bench.hpp"

namespace kbsim::python {

class PythonBench final : public Bench {
 public:
  PythonBench(std::string file, std::string name) : file_(std::move(file)), name_(std::move(name)) {}
  void run(BenchContext& ctx) override;

 private:
  std::string file_, name_;
};

}  // namespace kbsim::python
