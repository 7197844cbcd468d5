// Element types and shapes shared by the host runtime and the kernel API.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kbsim {

enum class DType : std::uint8_t { kF16, kBF16, kF32, kF64, kI8, kU8, kI16, kI32, kI64 };

inline constexpr std::size_t dtype_size(DType t) noexcept {
  switch (t) {
    case DType::kI8:
    case DType::kU8: return 1;
    case DType::kF16:
    case DType::kBF16:
    case DType::kI16: return 2;
    case DType::kF32:
    case DType::kI32: return 4;
    case DType::kF64:
    case DType::kI64: return 8;
  }
  return 0;
}

inline constexpr std::string_view dtype_name(DType t) noexcept {
  switch (t) {
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kF32: return "f32";
    case DType::kF64: return "f64";
    case DType::kI8: return "i8";
    case DType::kU8: return "u8";
    case DType::kI16: return "i16";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
  }
  return "?";
}

/// Parses "f16", "bf16", "f32", ...; throws std::invalid_argument naming the choices.
inline DType parse_dtype(std::string_view s) {
  for (DType t : {DType::kF16, DType::kBF16, DType::kF32, DType::kF64, DType::kI8, DType::kU8, DType::kI16, DType::kI32,
                  DType::kI64})
    if (dtype_name(t) == s) return t;
  throw std::invalid_argument("unknown dtype '" + std::string(s) + "' (f16, bf16, f32, f64, i8, u8, i16, i32, i64)");
}

/// A row-major shape of up to 4 dimensions.
class Shape {
 public:
  static constexpr std::size_t kMaxRank = 4;
  Shape() = default;
  Shape(std::initializer_list<std::int64_t> dims) {
    if (dims.size() > kMaxRank) throw std::invalid_argument("a shape has at most 4 dimensions");
    for (std::int64_t d : dims) {
      if (d < 0) throw std::invalid_argument("a shape's dimensions must be >= 0");
      dims_[rank_++] = d;
    }
  }
  std::size_t rank() const noexcept { return rank_; }
  std::int64_t operator[](std::size_t i) const noexcept { return dims_[i]; }
  std::int64_t& operator[](std::size_t i) noexcept { return dims_[i]; }
  /// Dimension `axis`, counting from the end when negative (-1 = last).
  std::int64_t dim(int axis) const { return dims_[index(axis)]; }
  std::size_t index(int axis) const {
    int r = static_cast<int>(rank_);
    int a = axis < 0 ? axis + r : axis;
    if (a < 0 || a >= r)
      throw std::invalid_argument("axis " + std::to_string(axis) + " is out of range for rank " +
                                  std::to_string(rank_));
    return static_cast<std::size_t>(a);
  }
  std::int64_t elements() const noexcept {
    std::int64_t n = 1;
    for (std::size_t i = 0; i < rank_; ++i) n *= dims_[i];
    return n;
  }
  /// Rows and columns of the shape seen as a matrix (leading dimensions fold into rows).
  std::int64_t rows() const noexcept {
    return rank_ < 2 ? 1 : elements() / std::max<std::int64_t>(dims_[rank_ - 1], 1);
  }
  std::int64_t cols() const noexcept { return rank_ == 0 ? 1 : dims_[rank_ - 1]; }
  bool operator==(const Shape& o) const noexcept {
    return rank_ == o.rank_ &&
           std::equal(dims_.begin(), dims_.begin() + static_cast<std::ptrdiff_t>(rank_), o.dims_.begin());
  }
  std::string str() const {
    std::string s = "(";
    for (std::size_t i = 0; i < rank_; ++i) s += (i ? ", " : "") + std::to_string(dims_[i]);
    return s + (rank_ == 1 ? ",)" : ")");
  }

 private:
  std::array<std::int64_t, kMaxRank> dims_{};
  std::size_t rank_ = 0;
};

namespace detail {
inline std::uint16_t f32_to_f16(float f) noexcept {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  std::uint32_t sign = (x >> 16) & 0x8000u;
  std::int32_t exp = static_cast<std::int32_t>((x >> 23) & 0xffu) - 127 + 15;
  std::uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xffu) == 0xffu) return static_cast<std::uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  if (exp >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return static_cast<std::uint16_t>(sign);
    mant |= 0x800000u;
    std::uint32_t shift = static_cast<std::uint32_t>(14 - exp);
    std::uint32_t half = mant >> shift;
    std::uint32_t rest = mant & ((1u << shift) - 1u), mid = 1u << (shift - 1u);
    if (rest > mid || (rest == mid && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = sign | (static_cast<std::uint32_t>(exp) << 10) | (mant >> 13);
  std::uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent: correct
  return static_cast<std::uint16_t>(half);
}
inline float f16_to_f32(std::uint16_t h) noexcept {
  std::uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}
inline std::uint16_t f32_to_bf16(float f) noexcept {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}
inline float bf16_to_f32(std::uint16_t h) noexcept { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }
template <class T>
void put(std::byte* p, T v) noexcept {
  std::memcpy(p, &v, sizeof v);
}
/// `v` truncated toward zero into integer type T, saturating at T's range; NaN becomes 0.
template <class T>
T to_int(double v) noexcept {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}
template <class T>
T take(const std::byte* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
}  // namespace detail

/// Store `v` at `p` as one element of type `t` (rounded to nearest even; integers
/// truncate toward zero and saturate, NaN storing 0).
inline void encode_value(double v, DType t, std::byte* p) noexcept {
  using namespace detail;
  switch (t) {
    case DType::kF16: put(p, f32_to_f16(static_cast<float>(v))); break;
    case DType::kBF16: put(p, f32_to_bf16(static_cast<float>(v))); break;
    case DType::kF32: put(p, static_cast<float>(v)); break;
    case DType::kF64: put(p, v); break;
    case DType::kI8: put(p, to_int<std::int8_t>(v)); break;
    case DType::kU8: put(p, to_int<std::uint8_t>(v)); break;
    case DType::kI16: put(p, to_int<std::int16_t>(v)); break;
    case DType::kI32: put(p, to_int<std::int32_t>(v)); break;
    case DType::kI64: put(p, to_int<std::int64_t>(v)); break;
  }
}

/// Store `values` at `out` as consecutive elements of type `t`, each as encode_value stores it (the type is looked at
/// once, not per element: a host transfer's tensors hold millions).
inline void encode_values(std::span<const double> values, DType t, std::byte* out) noexcept {
  using namespace detail;
  auto each = [&](auto convert) {
    constexpr std::size_t size = sizeof(decltype(convert(0.0)));
    for (std::size_t i = 0; i < values.size(); ++i) put(out + i * size, convert(values[i]));
  };
  switch (t) {
    case DType::kF16: each([](double v) { return f32_to_f16(static_cast<float>(v)); }); break;
    case DType::kBF16: each([](double v) { return f32_to_bf16(static_cast<float>(v)); }); break;
    case DType::kF32: each([](double v) { return static_cast<float>(v); }); break;
    case DType::kF64: each([](double v) { return v; }); break;
    case DType::kI8: each(to_int<std::int8_t>); break;
    case DType::kU8: each(to_int<std::uint8_t>); break;
    case DType::kI16: each(to_int<std::int16_t>); break;
    case DType::kI32: each(to_int<std::int32_t>); break;
    case DType::kI64: each(to_int<std::int64_t>); break;
  }
}

/// The element of type `t` at `p`, as a double.
inline double decode_value(const std::byte* p, DType t) noexcept {
  using namespace detail;
  switch (t) {
    case DType::kF16: return f16_to_f32(take<std::uint16_t>(p));
    case DType::kBF16: return bf16_to_f32(take<std::uint16_t>(p));
    case DType::kF32: return take<float>(p);
    case DType::kF64: return take<double>(p);
    case DType::kI8: return take<std::int8_t>(p);
    case DType::kU8: return take<std::uint8_t>(p);
    case DType::kI16: return take<std::int16_t>(p);
    case DType::kI32: return take<std::int32_t>(p);
    case DType::kI64: return static_cast<double>(take<std::int64_t>(p));
  }
  return 0.0;
}

/// `v` as an element of type `t` holds it (rounded as encode_value rounds), as a double.
inline double round_to(double v, DType t) noexcept {
  std::byte b[8];
  encode_value(v, t, b);
  return decode_value(b, t);
}

}  // namespace kbsim
