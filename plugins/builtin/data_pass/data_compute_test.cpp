// The data pass's arithmetic (GEMM with epilogues, every tl math op) against
// naive loops and hand-computed values, and the SDK's verification helper.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "compute.hpp"
#include "kbsim/tl/verify.hpp"

namespace kbsim::data_pass {
namespace {

using enum tl::MathOp;
using Ep = DataOp::Epilogue;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// Uniform in [-1, 1) from 24 random bits: the same on every platform.
std::vector<double> random_values(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<double> v(n);
  for (double& x : v) x = std::ldexp(static_cast<double>(gen() >> 8), -24) * 2 - 1;
  return v;
}

Value value(const Shape& shape, DType dtype, const std::vector<double>& v) { return make_value(shape, dtype, v); }

Value random_value(std::int64_t rows, std::int64_t cols, DType dtype, std::uint32_t seed) {
  return value({rows, cols}, dtype, random_values(static_cast<std::size_t>(rows * cols), seed));
}

/// data::gemm with defaults.
Value mm(const Value& a, const Value& b, DType out, std::vector<Ep> epilogue = {}, std::vector<Value> in = {},
         std::uint32_t tile_k = 0, const DataCompute* custom = nullptr) {
  return gemm(a, b, out, epilogue, in, tile_k, custom);
}

/// Row-major a (m x k) x b (k x n) in the order k = 0, 1, ... with accumulator type T.
template <class T>
std::vector<T> naive(const Value& a, const Value& b) {
  const std::vector<double> x = elements(a), y = elements(b);
  const auto m = static_cast<std::size_t>(a.shape[0]), k = static_cast<std::size_t>(a.shape[1]),
             n = static_cast<std::size_t>(b.shape[1]);
  std::vector<T> out(m * n, T{0});
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t p = 0; p < k; ++p) out[i * n + j] += static_cast<T>(x[i * k + p]) * static_cast<T>(y[p * n + j]);
  return out;
}

/// sum_k |a_ik b_kj|: the scale of an element's rounding error.
std::vector<double> magnitudes(const Value& a, const Value& b) {
  Value abs_a = math(kAbs, std::vector<Value>{a}, -1, a.shape, DType::kF64);
  Value abs_b = math(kAbs, std::vector<Value>{b}, -1, b.shape, DType::kF64);
  return naive<double>(abs_a, abs_b);
}

/// One unit in the last place of f16 at |v| (normal or subnormal).
double f16_ulp(double v) {
  const double a = std::abs(v);
  return a < 0x1p-14 ? 0x1p-24 : std::ldexp(1.0, std::ilogb(a) - 10);
}

std::vector<double> rounded(const std::vector<double>& v, DType dtype) {
  return elements(value({static_cast<std::int64_t>(v.size())}, dtype, v));
}

TEST(DataCompute, MakeValueRoundsToTheDtypeAndChecksTheCount) {
  Value v = value({3}, DType::kF16, {1.0, 1.0 / 3, 1e6});
  EXPECT_EQ(v.bytes->size(), 6u);
  EXPECT_EQ(elements(v), (std::vector<double>{1.0, 0.333251953125, kInf}));
  EXPECT_EQ(elements(value({2}, DType::kI8, {-3.0, 100.0})), (std::vector<double>{-3.0, 100.0}));
  EXPECT_THROW(value({2, 2}, DType::kF32, {1, 2, 3}), std::invalid_argument);
  Value short_bytes{std::make_shared<Bytes>(2), Shape{2}, DType::kF32};
  EXPECT_THROW(elements(short_bytes), std::invalid_argument);
}

TEST(DataCompute, GemmF32MatchesANaiveDoubleLoop) {
  Value a = random_value(37, 53, DType::kF32, 1), b = random_value(53, 29, DType::kF32, 2);
  Value c = mm(a, b, DType::kF32);
  EXPECT_EQ(c.shape, (Shape{37, 29}));
  EXPECT_EQ(c.dtype, DType::kF32);
  const std::vector<double> got = elements(c), want = naive<double>(a, b), mag = magnitudes(a, b);
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5 * mag[i]) << "element " << i;
}

// f16 inputs, f32 accumulation, f16 output. For a tiny product Eigen sums
// over K in order like the loop, so the result is exact; for a larger one
// its blocked kernels reorder the sum, so f16 rounding may differ by 1 ulp.
TEST(DataCompute, GemmF16AccumulatesInF32) {
  Value a = random_value(3, 4, DType::kF16, 3), b = random_value(4, 5, DType::kF16, 4);
  std::vector<float> acc = naive<float>(a, b);
  EXPECT_EQ(elements(mm(a, b, DType::kF16)), rounded(std::vector<double>(acc.begin(), acc.end()), DType::kF16));

  a = random_value(37, 53, DType::kF16, 5), b = random_value(53, 29, DType::kF16, 6);
  acc = naive<float>(a, b);
  const std::vector<double> got = elements(mm(a, b, DType::kF16)),
                            want = rounded(std::vector<double>(acc.begin(), acc.end()), DType::kF16);
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_LE(std::abs(got[i] - want[i]), f16_ulp(want[i])) << i;
}

TEST(DataCompute, GemmBf16RoundsInputsAndOutput) {
  // 1 + 2^-8 is halfway between bf16 1 and 1 + 2^-7: it rounds to even, 1.
  Value a = value({1, 2}, DType::kBF16, {1 + 0x1p-8, 2}), b = value({2, 1}, DType::kBF16, {1, 1});
  EXPECT_EQ(elements(mm(a, b, DType::kF32)), (std::vector<double>{3.0}));
  EXPECT_EQ(elements(mm(a, value({2, 1}, DType::kBF16, {1, 0.001}), DType::kBF16)),
            (std::vector<double>{1.0}));  // 1.002: under half a bf16 ulp (2^-8) above 1

  a = random_value(19, 40, DType::kBF16, 7), b = random_value(40, 11, DType::kBF16, 8);
  const std::vector<double> got = elements(mm(a, b, DType::kF32)), want = naive<double>(a, b), mag = magnitudes(a, b);
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5 * mag[i]) << i;
}

TEST(DataCompute, GemmF64AccumulatesInDouble) {
  // 2^24 + 1 is not a float: an f32 GEMM would give 2^24, f64 gives 2^24 + 2.
  Value a = value({1, 2}, DType::kF64, {0x1p24 + 1, 1}), b = value({2, 1}, DType::kF64, {1, 1});
  EXPECT_EQ(elements(mm(a, b, DType::kF64)), (std::vector<double>{0x1p24 + 2}));
  EXPECT_EQ(elements(mm(value({1, 2}, DType::kF32, {0x1p24 + 1, 1}), value({2, 1}, DType::kF32, {1, 1}), DType::kF64)),
            (std::vector<double>{0x1p24}));
  // Mixed with f64: double.
  EXPECT_EQ(elements(mm(value({1, 2}, DType::kI32, {0x1p24 + 1, 1}), b, DType::kF64)),
            (std::vector<double>{0x1p24 + 2}));

  a = random_value(23, 31, DType::kF64, 9), b = random_value(31, 17, DType::kF64, 10);
  const std::vector<double> got = elements(mm(a, b, DType::kF64)), want = naive<double>(a, b);
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-13) << i;
}

TEST(DataCompute, GemmI8ToI32IsExact) {
  std::vector<double> x = random_values(9 * 300, 11), y = random_values(300 * 7, 12);
  for (double& v : x) v = std::floor(v * 128);  // [-128, 127]
  for (double& v : y) v = std::floor(v * 128);
  Value a = value({9, 300}, DType::kI8, x), b = value({300, 7}, DType::kI8, y);
  Value c = mm(a, b, DType::kI32);
  EXPECT_EQ(c.dtype, DType::kI32);
  const std::vector<std::int64_t> want = naive<std::int64_t>(a, b);
  EXPECT_EQ(elements(c), std::vector<double>(want.begin(), want.end()));
  // Sums beyond 2^24 stay exact (a float accumulation would round them).
  Value big = value({1, 2}, DType::kI32, {0x1p24 + 1, 1});
  EXPECT_EQ(elements(mm(big, value({2, 1}, DType::kI8, {1, 2}), DType::kI64)), (std::vector<double>{0x1p24 + 3}));
}

TEST(DataCompute, GemmRejectsShapesThatDoNotMultiply) {
  Value a = random_value(2, 3, DType::kF32, 1);
  try {
    mm(a, random_value(4, 5, DType::kF32, 2), DType::kF32);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("(2, 3) by (4, 5)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(mm(value({3}, DType::kF32, {1, 2, 3}), value({3}, DType::kF32, {1, 2, 3}), DType::kF32),
               std::invalid_argument);
  EXPECT_THROW(mm(value({1, 2, 3}, DType::kF32, {1, 2, 3, 4, 5, 6}), random_value(3, 2, DType::kF32, 3), DType::kF32),
               std::invalid_argument);
}

// A = [[1, 2], [3, -4]], B = [[1, 0, -1], [0, 1, 2]]: A x B = [[1, 2, 3], [3, -4, -11]].
const Value kA = value({2, 2}, DType::kF32, {1, 2, 3, -4});
const Value kB = value({2, 3}, DType::kF32, {1, 0, -1, 0, 1, 2});

TEST(DataCompute, EpilogueBiasPerColumnThenRelu) {
  std::vector<Value> in = {kA, kB, value({3}, DType::kF32, {1, -3, 0.5})};
  const Ep bias{kBias, tl::Scope::kOutputTile, 1.0, 2}, relu{kRelu, tl::Scope::kOutputTile, 1.0, -1};
  // + [1, -3, 0.5] = [[2, -1, 3.5], [4, -7, -10.5]], then relu.
  EXPECT_EQ(elements(mm(kA, kB, DType::kF32, {bias, relu}, in)), (std::vector<double>{2, 0, 3.5, 4, 0, 0}));
  // The other order: relu first.
  EXPECT_EQ(elements(mm(kA, kB, DType::kF32, {relu, bias}, in)), (std::vector<double>{2, -1, 3.5, 4, -3, 0.5}));
}

TEST(DataCompute, EpilogueScaleAndDequantBroadcastTheirOperand) {
  std::vector<Value> in = {kA,
                           kB,
                           value({1}, DType::kF32, {3}),
                           value({3}, DType::kF32, {1, 10, 100}),
                           value({2, 3}, DType::kF32, {1, 2, 3, 4, 5, 6}),
                           value({4}, DType::kF32, {1, 2, 3, 4})};
  const auto out = tl::Scope::kOutputTile;
  EXPECT_EQ(elements(mm(kA, kB, DType::kF32, {{kScale, out, 0.5, -1}})),
            (std::vector<double>{0.5, 1, 1.5, 1.5, -2, -5.5}));
  EXPECT_EQ(elements(mm(kA, kB, DType::kF32, {{kScale, out, 0.5, 2}}, in)),  // scalar operand: x 1.5
            (std::vector<double>{1.5, 3, 4.5, 4.5, -6, -16.5}));
  EXPECT_EQ(elements(mm(kA, kB, DType::kF32, {{kDequant, out, 2, 3}}, in)),  // per column
            (std::vector<double>{2, 40, 600, 6, -80, -2200}));
  EXPECT_EQ(elements(mm(kA, kB, DType::kF32, {{kDequant, out, 1, 4}}, in)),  // elementwise
            (std::vector<double>{1, 4, 9, 12, -20, -66}));
  EXPECT_EQ(elements(mm(kA, kB, DType::kF32, {{kBias, out, 1, 4}}, in)), (std::vector<double>{2, 4, 6, 7, 1, -5}));

  EXPECT_THROW(mm(kA, kB, DType::kF32, {{kScale, out, 1, 5}}, in), std::invalid_argument);  // 4 elements
  EXPECT_THROW(mm(kA, kB, DType::kF32, {{kBias, out, 1, -1}}, in), std::invalid_argument);  // no operand
  EXPECT_THROW(mm(kA, kB, DType::kF32, {{kBias, out, 1, 6}}, in), std::invalid_argument);   // no such input
  EXPECT_THROW(mm(kA, kB, DType::kF32, {{kExp, out, 1, -1}}, in), std::invalid_argument);   // not an epilogue op
}

// A (2x4) x B (4x1) with B = [1, -3, 2, 1]:
//   row 0, A = [1, 1, 1, 1]:  K tiles of 2: -2, 3; of 3: 0, 1; all of K: 1
//   row 1, A = [2, 1, -1, 1]: K tiles of 2: -1, -1; of 3: -3, 1; all of K: -2
TEST(DataCompute, KTileReluAppliesToEachPartialProduct) {
  Value a = value({2, 4}, DType::kF32, {1, 1, 1, 1, 2, 1, -1, 1}), b = value({4, 1}, DType::kF32, {1, -3, 2, 1});
  const Ep k_relu{kRelu, tl::Scope::kKTile, 1.0, -1}, out_relu{kRelu, tl::Scope::kOutputTile, 1.0, -1};
  EXPECT_EQ(elements(mm(a, b, DType::kF32, {k_relu}, {}, 2)), (std::vector<double>{3, 0}));
  EXPECT_EQ(elements(mm(a, b, DType::kF32, {out_relu}, {}, 2)), (std::vector<double>{1, 0}));
  EXPECT_EQ(elements(mm(a, b, DType::kF32, {k_relu}, {}, 3)), (std::vector<double>{1, 1}));  // a short last tile
  EXPECT_EQ(elements(mm(a, b, DType::kF32, {k_relu}, {}, 0)), (std::vector<double>{1, 0}));  // one tile
  // Per-tile dequant by 2, then a bias on the output: 2 * (-2 + 3) + 10, 2 * (-1 - 1) + 10.
  std::vector<Value> in = {a, b, value({1}, DType::kF32, {10})};
  EXPECT_EQ(elements(mm(a, b, DType::kF32,
                        {{kDequant, tl::Scope::kKTile, 2, -1}, {kBias, tl::Scope::kOutputTile, 1, 2}}, in, 2)),
            (std::vector<double>{12, 6}));
  // Integers: exact products, then the same tiles.
  Value ai = value({2, 4}, DType::kI8, {1, 1, 1, 1, 2, 1, -1, 1}), bi = value({4, 1}, DType::kI8, {1, -3, 2, 1});
  EXPECT_EQ(elements(mm(ai, bi, DType::kI32, {k_relu}, {}, 2)), (std::vector<double>{3, 0}));
}

/// Writes `fill` everywhere and records its calls.
class FakeCompute final : public DataCompute {
 public:
  void gemm(std::span<const float> a, std::span<const float> b, std::span<float> out, std::size_t m, std::size_t k,
            std::size_t n) const override {
    calls.push_back({m, k, n, std::vector<float>(a.begin(), a.end()), b.size(), out.size()});
    for (float& x : out) x = fill;
  }
  struct Call {
    std::size_t m, k, n;
    std::vector<float> a;
    std::size_t b_size, out_size;
  };
  float fill = 7;
  mutable std::vector<Call> calls;
};

TEST(DataCompute, CustomComputeComputesEveryFloatProduct) {
  FakeCompute fake;
  Value a = value({2, 4}, DType::kF16, {1, 2, 3, 4, 5, 6, 7, 8}), b = random_value(4, 3, DType::kF16, 1);
  EXPECT_EQ(elements(mm(a, b, DType::kF32, {}, {}, 2, &fake)), std::vector<double>(6, 7.0));
  ASSERT_EQ(fake.calls.size(), 1u);  // no k_tile ops: one product over all of K
  EXPECT_EQ(fake.calls[0].m, 2u);
  EXPECT_EQ(fake.calls[0].k, 4u);
  EXPECT_EQ(fake.calls[0].n, 3u);

  fake.calls.clear();
  EXPECT_EQ(elements(mm(a, b, DType::kF32, {{kRelu, tl::Scope::kKTile, 1, -1}}, {}, 2, &fake)),
            std::vector<double>(6, 14.0));
  ASSERT_EQ(fake.calls.size(), 2u);
  EXPECT_EQ(fake.calls[1].k, 2u);
  EXPECT_EQ(fake.calls[1].a, (std::vector<float>{3, 4, 7, 8}));  // A[:, 2:4], contiguous
  EXPECT_EQ(fake.calls[1].b_size, 6u);
  EXPECT_EQ(fake.calls[1].out_size, 6u);

  // Not for f64 or integer products.
  fake.calls.clear();
  mm(value({1, 1}, DType::kF64, {2}), value({1, 1}, DType::kF64, {3}), DType::kF64, {}, {}, 0, &fake);
  mm(value({1, 1}, DType::kI8, {2}), value({1, 1}, DType::kI8, {3}), DType::kI32, {}, {}, 0, &fake);
  EXPECT_TRUE(fake.calls.empty());
}

// One Eigen product of the stacked A operands fails this for f32 (rows differ
// in the last bit); f16 outputs mostly hide it, so f16 inputs also go to f32.
TEST(DataCompute, GemmStackedIsBitIdenticalToOneGemmPerA) {
  for (auto [dtype, out] :
       {std::pair{DType::kF16, DType::kF16}, {DType::kF16, DType::kF32}, {DType::kF32, DType::kF32}}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)) + " -> " + std::string(dtype_name(out)));
    std::vector<Value> as;
    std::uint32_t seed = 20;
    for (std::int64_t m : {1, 5, 13, 32, 3, 64}) as.push_back(random_value(m, 70, dtype, seed++));
    Value b = random_value(70, 33, dtype, seed++);
    std::vector<Value> in = {as[0], b, random_value(1, 33, DType::kF32, seed++)};
    const std::vector<Ep> epilogue = {{kScale, tl::Scope::kKTile, 0.75, -1},
                                      {kBias, tl::Scope::kOutputTile, 1, 2},
                                      {kRelu, tl::Scope::kOutputTile, 1, -1}};
    for (std::uint32_t tile_k : {0u, 16u}) {
      const std::vector<Value> stacked = gemm_stacked(as, b, out, epilogue, in, tile_k, nullptr);
      ASSERT_EQ(stacked.size(), as.size());
      for (std::size_t i = 0; i < as.size(); ++i) {
        const Value one = mm(as[i], b, out, epilogue, in, tile_k);
        EXPECT_EQ(stacked[i].shape, one.shape);
        EXPECT_EQ(*stacked[i].bytes, *one.bytes) << "A " << i << ", tile_k " << tile_k;
      }
    }
  }
  // Mixed A dtypes, an empty batch, and a K that does not match.
  Value b = random_value(8, 4, DType::kF32, 1);
  std::vector<Value> as = {random_value(3, 8, DType::kF16, 2), random_value(2, 8, DType::kF64, 3)};
  const std::vector<Value> mixed = gemm_stacked(as, b, DType::kF32, {}, {}, 0, nullptr);
  EXPECT_EQ(*mixed[1].bytes, *mm(as[1], b, DType::kF32).bytes);
  EXPECT_TRUE(gemm_stacked({}, b, DType::kF32, {}, {}, 0, nullptr).empty());
  as.push_back(random_value(2, 7, DType::kF16, 4));
  EXPECT_THROW(gemm_stacked(as, b, DType::kF32, {}, {}, 0, nullptr), std::invalid_argument);
}

std::vector<double> run(tl::MathOp op, const std::vector<std::vector<double>>& inputs, DType out = DType::kF64) {
  std::vector<Value> in;
  for (const auto& x : inputs) in.push_back(value({static_cast<std::int64_t>(x.size())}, DType::kF64, x));
  std::size_t n = 1;
  for (const auto& x : inputs) n = std::max(n, x.size());
  return elements(math(op, in, -1, Shape{static_cast<std::int64_t>(n)}, out));
}

TEST(DataCompute, MathElementwiseOps) {
  const double e = 2.718281828459045, pi = 3.141592653589793;
  struct Case {
    tl::MathOp op;
    std::vector<std::vector<double>> in;
    std::vector<double> want;
  };
  const std::vector<Case> cases = {
      {kExp, {{0, 1}}, {1, e}},
      {kLog, {{1, e * e}}, {0, 2}},
      {kSqrt, {{4, 2}}, {2, 1.4142135623730951}},
      {kAbs, {{-3, 2.5}}, {3, 2.5}},
      {kSigmoid, {{0, std::log(3.0)}}, {0.5, 0.75}},
      {kCos, {{0, pi}}, {1, -1}},
      {kSin, {{0, pi / 2}}, {0, 1}},
      {kRelu, {{-1, 2, 0}}, {0, 2, 0}},
      {kAdd, {{1, 2}, {3, 4}}, {4, 6}},
      {kSub, {{1, 2}, {3, 5}}, {-2, -3}},
      {kMul, {{1.5, 2}, {3, -4}}, {4.5, -8}},
      {kDiv, {{1, 3}, {4, 2}}, {0.25, 1.5}},
      {kMaximum, {{1, 5}, {3, 2}}, {3, 5}},
      {kMinimum, {{1, 5}, {3, 2}}, {1, 2}},
      {kFma, {{2, 3}, {4, 5}, {1, -1}}, {9, 14}},
      {kClamp, {{-5, 0.5, 7}, {0}, {1}}, {0, 0.5, 1}},
      {kWhere, {{1, 0, -2}, {10, 20, 30}, {-1, -2, -3}}, {10, -2, 30}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(tl::math_op_name(c.op));
    const std::vector<double> got = run(c.op, c.in);
    ASSERT_EQ(got.size(), c.want.size());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], c.want[i], 1e-15) << i;
  }
  EXPECT_EQ(run(kExp, {{1}}, DType::kF16), (std::vector<double>{2.71875}));  // rounded to the output type
  EXPECT_TRUE(std::isnan(run(kMaximum, {{kNaN}, {1}})[0]));
  EXPECT_TRUE(std::isnan(run(kMinimum, {{1}, {kNaN}})[0]));
}

TEST(DataCompute, MathBroadcastsSingleElementInputs) {
  EXPECT_EQ(run(kSub, {{10}, {1, 2, 3}}), (std::vector<double>{9, 8, 7}));
  std::vector<Value> in = {value({2, 3}, DType::kF32, {1, 2, 3, 4, 5, 6}), value({1, 1}, DType::kF16, {10})};
  EXPECT_EQ(elements(math(kAdd, in, -1, Shape{2, 3}, DType::kF32)), (std::vector<double>{11, 12, 13, 14, 15, 16}));
}

TEST(DataCompute, MathSoftmaxAlongAnAxis) {
  std::vector<Value> in = {value({2, 3}, DType::kF32, {1, 2, 3, 0, 0, 0})};
  const std::vector<double> rows = elements(math(kSoftmax, in, -1, Shape{2, 3}, DType::kF64));
  const std::vector<double> want_rows = {
      0.09003057317038046, 0.24472847105479767, 0.6652409557748219, 1.0 / 3, 1.0 / 3, 1.0 / 3};
  for (std::size_t i = 0; i < 6; ++i) EXPECT_NEAR(rows[i], want_rows[i], 1e-15) << i;
  EXPECT_NEAR(rows[0] + rows[1] + rows[2], 1.0, 1e-15);
  EXPECT_NEAR(rows[3] + rows[4] + rows[5], 1.0, 1e-15);
  // Along columns: softmax of (x, 0) is (sigmoid(x), sigmoid(-x)).
  const std::vector<double> cols = elements(math(kSoftmax, in, 0, Shape{2, 3}, DType::kF64));
  const std::vector<double> want_cols = {0.7310585786300049, 0.8807970779778823,  0.9525741268224334,
                                         0.2689414213699951, 0.11920292202211755, 0.04742587317756678};
  for (std::size_t i = 0; i < 6; ++i) EXPECT_NEAR(cols[i], want_cols[i], 1e-15) << i;
  // Large inputs do not overflow: the max is subtracted first.
  std::vector<Value> big = {value({2}, DType::kF64, {1000, 1000})};
  EXPECT_EQ(elements(math(kSoftmax, big, 0, Shape{2}, DType::kF64)), (std::vector<double>{0.5, 0.5}));
}

TEST(DataCompute, MathReductionsKeepTheAxis) {
  std::vector<Value> in = {value({2, 3}, DType::kF32, {1, -2, 3, 4, 5, -6})};
  auto reduce = [&](tl::MathOp op, int axis, const Shape& out) {
    return elements(math(op, in, axis, out, DType::kF64));
  };
  EXPECT_EQ(reduce(kSum, 0, {1, 3}), (std::vector<double>{5, 3, -3}));
  EXPECT_EQ(reduce(kSum, -1, {2, 1}), (std::vector<double>{2, 3}));
  EXPECT_EQ(reduce(kMax, 0, {1, 3}), (std::vector<double>{4, 5, 3}));
  EXPECT_EQ(reduce(kMax, -1, {2, 1}), (std::vector<double>{3, 5}));
  EXPECT_EQ(reduce(kMin, 0, {1, 3}), (std::vector<double>{1, -2, -6}));
  EXPECT_EQ(reduce(kMin, 1, {2, 1}), (std::vector<double>{-2, -6}));
}

TEST(DataCompute, MathAlongTheMiddleAxisOfRank4MatchesALoop) {
  const Shape shape{2, 3, 4, 5};
  Value x = value(shape, DType::kF64, random_values(120, 30));
  const std::vector<double> v = elements(x);
  std::vector<Value> in = {x};
  const std::vector<double> sum = elements(math(kSum, in, 2, Shape{2, 3, 1, 5}, DType::kF64));
  const std::vector<double> soft = elements(math(kSoftmax, in, -2, shape, DType::kF64));
  auto at = [&](std::size_t o, std::size_t a, std::size_t i) { return v[(o * 4 + a) * 5 + i]; };  // axis 2 is a
  for (std::size_t o = 0; o < 6; ++o)
    for (std::size_t i = 0; i < 5; ++i) {
      double s = 0, m = -kInf, z = 0;
      for (std::size_t a = 0; a < 4; ++a) s += at(o, a, i), m = std::max(m, at(o, a, i));
      for (std::size_t a = 0; a < 4; ++a) z += std::exp(at(o, a, i) - m);
      EXPECT_DOUBLE_EQ(sum[o * 5 + i], s);
      for (std::size_t a = 0; a < 4; ++a) EXPECT_NEAR(soft[(o * 4 + a) * 5 + i], std::exp(at(o, a, i) - m) / z, 1e-15);
    }
}

TEST(DataCompute, MathRejectsBadInputs) {
  std::vector<Value> two = {value({2, 3}, DType::kF32, {1, 2, 3, 4, 5, 6}), value({4}, DType::kF32, {1, 2, 3, 4})};
  try {
    math(kAdd, two, -1, Shape{2, 3}, DType::kF32);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("add: inputs (2, 3), (4,)"), std::string::npos) << e.what();
  }
  std::vector<Value> one = {two[0]};
  EXPECT_THROW(math(kSum, one, -1, Shape{2, 3}, DType::kF32), std::invalid_argument);  // the axis is kept
  EXPECT_THROW(math(kSum, one, 2, Shape{2, 1}, DType::kF32), std::invalid_argument);   // no axis 2
  EXPECT_THROW(math(kSoftmax, one, -1, Shape{3, 2}, DType::kF32), std::invalid_argument);
  EXPECT_THROW(math(kAdd, one, -1, Shape{2, 3}, DType::kF32), std::invalid_argument);  // one input of two
  EXPECT_THROW(math(kExp, one, -1, Shape{6, 2}, DType::kF32), std::invalid_argument);
  try {
    math(kBias, one, -1, Shape{2, 3}, DType::kF32);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bias is a GEMM epilogue op"), std::string::npos) << e.what();
  }
  EXPECT_THROW(math(kScale, one, -1, Shape{2, 3}, DType::kF32), std::invalid_argument);
  EXPECT_THROW(math(kDequant, one, -1, Shape{2, 3}, DType::kF32), std::invalid_argument);
}

}  // namespace
}  // namespace kbsim::data_pass

namespace kbsim::verify {
namespace {

std::vector<std::byte> bytes(DType dtype, const std::vector<double>& v) {
  std::vector<std::byte> out(v.size() * dtype_size(dtype));
  for (std::size_t i = 0; i < v.size(); ++i) encode_value(v[i], dtype, out.data() + i * dtype_size(dtype));
  return out;
}

TEST(Verify, ToleranceTable) {
  EXPECT_EQ(tolerance(DType::kF32).rtol, 1e-5);
  EXPECT_EQ(tolerance(DType::kF32).atol, 1e-5);
  EXPECT_EQ(tolerance(DType::kF16).rtol, 1e-3);
  EXPECT_EQ(tolerance(DType::kBF16).atol, 1e-2);
  EXPECT_EQ(tolerance(DType::kF64).rtol, 1e-9);
  EXPECT_FALSE(tolerance(DType::kF64).exact);
  for (DType t : {DType::kI8, DType::kU8, DType::kI16, DType::kI32, DType::kI64}) EXPECT_TRUE(tolerance(t).exact);
}

TEST(DataCompute, EncodingManyValuesStoresWhatEncodingEachStores) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> v = {0.0,  -0.0,  1.0 / 3, -2.5,   65504.0, 70000.0,      1e-8, 1e300, -1e300,
                                 -7.9, 127.6, 128.0,   -129.0, 255.9,   std::nan(""), inf,  -inf};
  for (DType t : {DType::kF16, DType::kBF16, DType::kF32, DType::kF64, DType::kI8, DType::kU8, DType::kI16, DType::kI32,
                  DType::kI64}) {
    std::vector<std::byte> many(v.size() * dtype_size(t));
    encode_values(v, t, many.data());
    EXPECT_EQ(many, bytes(t, v)) << dtype_name(t);
  }
}

TEST(DataCompute, EncodingManyHalvesStoresWhatEncodingEachStoresForEveryKindOfFloat) {
  // Floats of every exponent (zeros, subnormals, normals, the rounding edges, infinities, NaNs), both signs.
  std::vector<double> v;
  std::uint32_t bits = 12345;
  for (int i = 0; i < 200000; ++i) {
    bits = bits * 1664525u + 1013904223u;
    v.push_back(std::bit_cast<float>(bits));
  }
  for (std::uint32_t edge : {0x477fefffu, 0x477ff000u, 0x38800000u, 0x387fffffu, 0x33000000u, 0x33000001u, 0x7f800000u,
                             0x7f800001u, 0xffc00000u})
    v.push_back(std::bit_cast<float>(edge));
  std::vector<std::byte> many(v.size() * 2);
  encode_values(v, DType::kF16, many.data());
  EXPECT_EQ(many, bytes(DType::kF16, v));
}

TEST(Verify, FirstMismatchIsTheFirstElementOutsideTheTolerance) {
  const std::vector<double> expected = {1, 2, 3, 4, 5, 6};
  // f32 tolerance at 2: 1e-5 + 2e-5 = 3e-5.
  auto b = bytes(DType::kF32, {1, 2 + 2e-5, 3, 4.1, 5, 7});
  std::optional<Mismatch> m = first_mismatch(b, DType::kF32, expected);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->index, 3);
  EXPECT_EQ(m->actual, static_cast<double>(4.1f));
  EXPECT_EQ(m->expected, 4);
  b = bytes(DType::kF32, {1, 2 + 4e-5, 3, 4, 5, 6});
  EXPECT_EQ(first_mismatch(b, DType::kF32, expected).value().index, 1);
  EXPECT_FALSE(first_mismatch(bytes(DType::kF16, {1.0009, 2, 3, 4, 5, 6}), DType::kF16, expected));
  EXPECT_THROW(first_mismatch(bytes(DType::kF32, {1, 2}), DType::kF32, expected), std::invalid_argument);
}

TEST(Verify, IntegersCompareExactly) {
  EXPECT_FALSE(first_mismatch(bytes(DType::kI32, {1, -2, 300}), DType::kI32, std::vector<double>{1, -2, 300}));
  auto m = first_mismatch(bytes(DType::kI32, {1, -2, 300}), DType::kI32, std::vector<double>{1, -2, 300.0001});
  ASSERT_TRUE(m);
  EXPECT_EQ(m->index, 2);
}

TEST(Verify, NanNeverMatchesAndAnInfinityOnlyMatchesItself) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(first_mismatch(bytes(DType::kF32, {1, nan}), DType::kF32, std::vector<double>{1, nan}).value().index, 1);
  EXPECT_EQ(first_mismatch(bytes(DType::kF32, {1, 2}), DType::kF32, std::vector<double>{nan, 2}).value().index, 0);
  EXPECT_FALSE(first_mismatch(bytes(DType::kF16, {inf, -inf}), DType::kF16, std::vector<double>{inf, -inf}));
  EXPECT_EQ(first_mismatch(bytes(DType::kF16, {inf}), DType::kF16, std::vector<double>{-inf}).value().index, 0);
  EXPECT_EQ(first_mismatch(bytes(DType::kF32, {1, inf}), DType::kF32, std::vector<double>{1, 2}).value().index, 1);
  EXPECT_EQ(first_mismatch(bytes(DType::kF64, {1}), DType::kF64, std::vector<double>{inf}).value().index, 0);
}

TEST(Verify, IndexStrAndDescribe) {
  EXPECT_EQ(index_str(77, Shape{4, 20}), "(3, 17)");
  EXPECT_EQ(index_str(23, Shape{2, 3, 4}), "(1, 2, 3)");
  EXPECT_EQ(index_str(5, Shape{8}), "(5,)");
  EXPECT_EQ(index_str(0, Shape{}), "()");
  EXPECT_EQ(describe({77, 1.5, 2.25}, Shape{4, 20}, DType::kF16),
            "element (3, 17): got 1.5, expected 2.25 (f16: rtol 0.001, atol 0.001)");
  EXPECT_EQ(describe({1, 1.0 / 3, 0.1}, Shape{2}, DType::kF32),
            "element (1,): got 0.333333333, expected 0.1 (f32: rtol 1e-05, atol 1e-05)");
  EXPECT_EQ(describe({2, 123456789012, -6}, Shape{3}, DType::kI64),
            "element (2,): got 123456789012, expected -6 (i64: exact)");
}

}  // namespace
}  // namespace kbsim::verify
