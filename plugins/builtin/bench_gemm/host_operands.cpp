#include "host_operands.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cstring>

#include "kbsim/host_memory.hpp"
#include "kbsim/tl/verify.hpp"

namespace kbsim::bench_gemm {

namespace {

/// The operand codes (0..2047) of a stream, passed to `take` in order (xorshift).
template <class Take>
void generate(std::int64_t n, unsigned seed, Take take) {
  std::uint32_t x = 2463534242u ^ seed;
  for (std::int64_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    take(x % 2048);
  }
}

double value_of(std::uint32_t code) { return static_cast<double>(code) / 1024.0 - 1.0; }

}  // namespace

std::vector<double> values(std::int64_t n, unsigned seed) {
  std::vector<double> v;
  v.reserve(static_cast<std::size_t>(n));
  generate(n, seed, [&](std::uint32_t code) { v.push_back(value_of(code)); });
  return v;
}

std::vector<std::byte> operand(std::int64_t n, unsigned seed) {
  static const std::array<std::uint16_t, 2048> kF16 = [] {
    std::array<std::uint16_t, 2048> t{};
    for (std::uint32_t c = 0; c < t.size(); ++c)
      encode_value(value_of(c), DType::kF16, reinterpret_cast<std::byte*>(&t[c]));
    return t;
  }();
  std::vector<std::byte> out(static_cast<std::size_t>(n) * 2);
  std::byte* p = out.data();
  generate(n, seed, [&](std::uint32_t code) {
    std::memcpy(p, &kF16[code], 2);
    p += 2;
  });
  return out;
}

std::vector<double> reference(const std::vector<double>& a, const std::vector<double>& b, std::int64_t m,
                              std::int64_t k, std::int64_t n, bool relu) {
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  auto f16 = [](double v) { return static_cast<float>(round_to(v, DType::kF16)); };
  Matrix ma(m, k), mb(k, n);
  for (std::int64_t i = 0; i < m * k; ++i) ma.data()[i] = f16(a[static_cast<std::size_t>(i)]);
  for (std::int64_t i = 0; i < k * n; ++i) mb.data()[i] = f16(b[static_cast<std::size_t>(i)]);
  const Matrix mc = ma * mb;
  std::vector<double> c(static_cast<std::size_t>(m * n));
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = f16(relu ? std::max(mc.data()[i], 0.0f) : mc.data()[i]);
  return c;
}

void check(BenchContext& ctx, const std::string& name, const std::vector<std::byte>& got,
           const std::vector<double>& want, const Shape& shape) {
  if (auto bad = verify::first_mismatch(got, DType::kF16, want))
    throw BenchError("DATA_MISMATCH", name + " " + verify::describe(*bad, shape, DType::kF16));
  ctx.note("verified " + name + " " + shape.str() + " f16 against Eigen: all " + std::to_string(want.size()) +
           " elements within the f16 tolerance");
}

}  // namespace kbsim::bench_gemm
