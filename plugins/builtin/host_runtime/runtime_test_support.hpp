// What the host runtime's tests share: an exception's message, and host values exact in f16.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kbsim::host_runtime_test {

/// The message of the exception of type E `f` throws ("" and a failure otherwise).
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "nothing (or another type) was thrown";
  return "";
}

/// n values, exact in f16.
inline std::vector<double> sample(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<double>(i % 97) * 0.25 - 11.0;
  return v;
}

}  // namespace kbsim::host_runtime_test
