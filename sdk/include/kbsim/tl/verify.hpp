// Checking a computed tensor against expected values, as numpy.allclose does:
// |actual - expected| <= atol + rtol * |expected|, with a tolerance per dtype;
// and whether the run asked for it (`kbsim run --verify-data`, the flag the
// data pass declares).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "kbsim/bench.hpp"
#include "kbsim/tl/dtype.hpp"

namespace kbsim::verify {

/// `kbsim run --verify-data`: the data pass runs (tensors read back hold computed values) and a bench checks its
/// outputs.
inline constexpr BoolParam kVerifyData{
    "verify-data", false,
    "run the data pass: compute every op's values and check the bench's outputs against a reference"};

/// Whether this run verifies data (false when no data pass is loaded to declare the flag).
inline bool asked(const BenchContext& ctx) { return ctx.flags().has(kVerifyData.name) && ctx.flags().get(kVerifyData); }

struct Tolerance {
  double rtol = 0, atol = 0;
  bool exact = false;  ///< integers: equal or not
};

/// The tolerance for results stored as `dtype`. The reference gives none;
/// these are ours, about one unit in the last place of each float type.
inline Tolerance tolerance(DType dtype) noexcept {
  switch (dtype) {
    case DType::kF16: return {1e-3, 1e-3};
    case DType::kBF16: return {1e-2, 1e-2};
    case DType::kF32: return {1e-5, 1e-5};
    case DType::kF64: return {1e-9, 1e-9};
    case DType::kI8:
    case DType::kU8:
    case DType::kI16:
    case DType::kI32:
    case DType::kI64: break;
  }
  return {0, 0, true};
}

struct Mismatch {
  std::int64_t index = 0;  ///< row-major flat index
  double actual = 0, expected = 0;
};

/// The first element of `actual` (elements of `dtype`) that is not close to
/// `expected`, or none. NaN never matches; an infinity matches only itself. Throws
/// std::invalid_argument when the sizes differ.
inline std::optional<Mismatch> first_mismatch(std::span<const std::byte> actual, DType dtype,
                                              std::span<const double> expected) {
  const std::size_t size = dtype_size(dtype);
  if (actual.size() != expected.size() * size)
    throw std::invalid_argument("verify: " + std::to_string(actual.size()) + " bytes of " +
                                std::string(dtype_name(dtype)) + " do not hold the " + std::to_string(expected.size()) +
                                " expected elements (" + std::to_string(expected.size() * size) + " bytes)");
  const Tolerance tol = tolerance(dtype);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double a = decode_value(actual.data() + i * size, dtype), e = expected[i];
    const bool close = a == e || (!tol.exact && std::isfinite(a) && std::isfinite(e) &&
                                  std::abs(a - e) <= tol.atol + tol.rtol * std::abs(e));
    if (!close) return Mismatch{static_cast<std::int64_t>(i), a, e};
  }
  return std::nullopt;
}

/// The row-major multi-index of element `flat` of `shape`, e.g. "(3, 17)".
inline std::string index_str(std::int64_t flat, const Shape& shape) {
  std::int64_t index[Shape::kMaxRank] = {};
  for (std::size_t d = shape.rank(); d-- > 0;) {
    if (d == 0 || shape[d] == 0) {
      index[d] = flat;
      break;
    }
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string s = "(";
  for (std::size_t d = 0; d < shape.rank(); ++d) s += (d ? ", " : "") + std::to_string(index[d]);
  return s + (shape.rank() == 1 ? ",)" : ")");
}

namespace detail {
/// Up to 9 significant digits; integers of exact types in full.
inline std::string number(double v, bool exact) {
  if (exact && v == std::trunc(v) && std::abs(v) < 9.2e18) return std::to_string(static_cast<long long>(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}
}  // namespace detail

/// E.g. "element (3, 17): got 1.5, expected 2.25 (f16: rtol 0.001, atol 0.001)".
inline std::string describe(const Mismatch& m, const Shape& shape, DType dtype) {
  const Tolerance tol = tolerance(dtype);
  std::string s = "element " + index_str(m.index, shape) + ": got " + detail::number(m.actual, tol.exact) +
                  ", expected " + detail::number(m.expected, tol.exact) + " (" + std::string(dtype_name(dtype));
  if (tol.exact) return s + ": exact)";
  return s + ": rtol " + detail::number(tol.rtol, false) + ", atol " + detail::number(tol.atol, false) + ")";
}

}  // namespace kbsim::verify
