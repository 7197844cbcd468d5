// A component that can say what it waits for. When a run gets stuck (no event
// left while work is still outstanding), whoever notices it (e.g. the host
// runtime) asks every component that implements this interface, so the error
// says who waits on what instead of only "stuck".
#pragma once

#include <string>

namespace kbsim {

class Waiting {
 public:
  /// One phrase: what this component waits for and since when; empty when it waits for nothing.
  virtual std::string waiting_for() const = 0;

 protected:
  ~Waiting() = default;
};

}  // namespace kbsim
