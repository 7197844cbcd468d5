#include "compute.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kbsim::data_pass {

namespace {

using enum tl::MathOp;

template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

[[noreturn]] void invalid(const std::string& what) { throw std::invalid_argument(what); }

std::string op_name(tl::MathOp op) { return std::string(tl::math_op_name(op)); }

void check_bytes(const Value& v) {
  const std::uint64_t have = v.bytes ? v.bytes->size() : 0;
  if (!v.bytes || have != v.nbytes())
    invalid("a " + v.shape.str() + " " + std::string(dtype_name(v.dtype)) + " value holds " + std::to_string(have) +
            " bytes, not " + std::to_string(v.nbytes()));
}

// NaN-propagating max and min, as numpy's maximum and minimum.
double nan_max(double a, double b) { return a > b || std::isnan(a) ? a : b; }
double nan_min(double a, double b) { return a < b || std::isnan(a) ? a : b; }

// ---- GEMM ----

bool is_float(DType t) { return t == DType::kF16 || t == DType::kBF16 || t == DType::kF32 || t == DType::kF64; }

void check_shapes(const Value& a, const Value& b) {
  if (a.shape.rank() != 2 || b.shape.rank() != 2 || a.shape[1] != b.shape[0])
    invalid("gemm: cannot multiply " + a.shape.str() + " by " + b.shape.str() + " (needs (M, K) x (K, N))");
}

template <class T>
Matrix<T> to_matrix(const Value& v) {
  check_bytes(v);
  Matrix<T> m(v.shape[0], v.shape[1]);
  const std::size_t size = dtype_size(v.dtype);
  for (Eigen::Index i = 0; i < m.size(); ++i)
    m.data()[i] = static_cast<T>(decode_value(v.bytes->data() + static_cast<std::size_t>(i) * size, v.dtype));
  return m;
}

/// An epilogue op with its operand's elements.
struct Step {
  DataOp::Epilogue op;
  bool has_operand = false;
  std::vector<double> operand;
};

std::vector<Step> resolve(std::span<const DataOp::Epilogue> epilogue, std::span<const Value> operands) {
  std::vector<Step> steps;
  for (const DataOp::Epilogue& e : epilogue) {
    if (e.op != kRelu && e.op != kScale && e.op != kDequant && e.op != kBias)
      invalid("gemm epilogue: " + op_name(e.op) + " is not an epilogue op (dequant, bias, relu, scale)");
    Step s{e, e.operand >= 0, {}};
    if (s.has_operand) {
      if (static_cast<std::size_t>(e.operand) >= operands.size())
        invalid("gemm epilogue " + op_name(e.op) + ": operand " + std::to_string(e.operand) + " of " +
                std::to_string(operands.size()));
      s.operand = elements(operands[static_cast<std::size_t>(e.operand)]);
    } else if (e.op == kBias) {
      invalid("gemm epilogue bias needs an operand");
    }
    steps.push_back(std::move(s));
  }
  return steps;
}

/// Applies the ops of `scope` to `x` (M x N). An operand broadcasts: 1 element
/// = scalar, N = per column, M*N = elementwise.
template <class S>
void apply(const std::vector<Step>& steps, tl::Scope scope, Matrix<S>& x) {
  const auto m = static_cast<std::size_t>(x.rows()), n = static_cast<std::size_t>(x.cols());
  for (const Step& s : steps) {
    if (s.op.scope != scope) continue;
    const std::size_t size = s.operand.size();
    if (s.has_operand && size != 1 && size != n && size != m * n)
      invalid("gemm epilogue " + op_name(s.op.op) + ": operand of " + std::to_string(size) + " elements for a (" +
              std::to_string(m) + ", " + std::to_string(n) + ") result (needs 1, " + std::to_string(n) + " or " +
              std::to_string(m * n) + ")");
    auto at = [&](std::size_t i, std::size_t j) {
      return static_cast<S>(size == 1 ? s.operand[0] : size == n ? s.operand[j] : s.operand[i * n + j]);
    };
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        S& v = x(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
        if (s.op.op == kRelu) {
          v = std::max(v, S{0});  // keeps NaN
        } else if (s.op.op == kBias) {
          v += at(i, j);
        } else {  // scale, dequant
          v *= static_cast<S>(s.op.factor);
          if (s.has_operand) v *= at(i, j);
        }
      }
  }
}

/// a[:, k0:k0+kk] x b[k0:k0+kk, :], by `custom` when given (float only).
template <class T>
Matrix<T> product(const Matrix<T>& a, const Matrix<T>& b, Eigen::Index k0, Eigen::Index kk, const DataCompute* custom) {
  if constexpr (std::is_same_v<T, float>) {
    if (custom) {
      const Matrix<float> as = a.middleCols(k0, kk);  // contiguous
      Matrix<float> out = Matrix<float>::Zero(a.rows(), b.cols());
      const auto m = static_cast<std::size_t>(a.rows()), k = static_cast<std::size_t>(kk),
                 n = static_cast<std::size_t>(b.cols());
      custom->gemm({as.data(), m * k}, {b.data() + k0 * b.cols(), k * n}, {out.data(), m * n}, m, k, n);
      return out;
    }
  }
  Matrix<T> out = a.middleCols(k0, kk) * b.middleRows(k0, kk);
  return out;
}

/// One GEMM on decoded operands. T is the product type; epilogues and K-tile
/// sums run in S: float for float products, double otherwise (integer
/// products are exact in 64 bits, but dequant and scale factors are real).
template <class T>
Value multiply(const Matrix<T>& a, const Matrix<T>& b, DType out_dtype, const std::vector<Step>& steps,
               std::uint32_t tile_k, const DataCompute* custom) {
  using S = std::conditional_t<std::is_same_v<T, float>, float, double>;
  const Eigen::Index k = a.cols();
  // K is split into tiles only for k_tile ops: one product is both faster and closer to exact.
  const bool tiled =
      std::any_of(steps.begin(), steps.end(), [](const Step& s) { return s.op.scope == tl::Scope::kKTile; });
  const Eigen::Index step = tiled && tile_k > 0 ? static_cast<Eigen::Index>(tile_k) : std::max<Eigen::Index>(k, 1);
  Matrix<S> acc = Matrix<S>::Zero(a.rows(), b.cols());
  for (Eigen::Index k0 = 0; k0 < k; k0 += step) {
    Matrix<S> part = product(a, b, k0, std::min(step, k - k0), custom).template cast<S>();
    apply(steps, tl::Scope::kKTile, part);
    acc += part;
  }
  apply(steps, tl::Scope::kOutputTile, acc);

  const std::size_t size = dtype_size(out_dtype);
  auto bytes = std::make_shared<Bytes>(static_cast<std::size_t>(acc.size()) * size);
  for (Eigen::Index i = 0; i < acc.size(); ++i)
    encode_value(static_cast<double>(acc.data()[i]), out_dtype, bytes->data() + static_cast<std::size_t>(i) * size);
  return Value{std::move(bytes), Shape{acc.rows(), acc.cols()}, out_dtype};
}

/// The GEMMs of every A with one B, decoding B and the epilogue operands once.
template <class T>
std::vector<Value> multiply_all(std::span<const Value> as, const Value& b, DType out_dtype,
                                std::span<const DataOp::Epilogue> epilogue, std::span<const Value> operands,
                                std::uint32_t tile_k, const DataCompute* custom) {
  const Matrix<T> bm = to_matrix<T>(b);
  const std::vector<Step> steps = resolve(epilogue, operands);
  std::vector<Value> out;
  for (const Value& a : as) out.push_back(multiply(to_matrix<T>(a), bm, out_dtype, steps, tile_k, custom));
  return out;
}

// ---- math ----

/// Inputs of a math op; throws for the GEMM epilogue ops.
std::size_t arity(tl::MathOp op) {
  if (op == kDequant || op == kBias || op == kScale) invalid("math: " + op_name(op) + " is a GEMM epilogue op");
  if (op == kFma || op == kClamp || op == kWhere) return 3;
  return op >= kAdd && op <= kMinimum ? 2 : 1;
}

double elementwise(tl::MathOp op, double x, double y, double z) {
  switch (op) {
    case kExp: return std::exp(x);
    case kLog: return std::log(x);
    case kSqrt: return std::sqrt(x);
    case kAbs: return std::abs(x);
    case kSigmoid: return 1.0 / (1.0 + std::exp(-x));
    case kCos: return std::cos(x);
    case kSin: return std::sin(x);
    case kRelu: return nan_max(x, 0.0);
    case kAdd: return x + y;
    case kSub: return x - y;
    case kMul: return x * y;
    case kDiv: return x / y;
    case kMaximum: return nan_max(x, y);
    case kMinimum: return nan_min(x, y);
    case kFma: return x * y + z;
    case kClamp: return nan_min(nan_max(x, y), z);
    case kWhere: return x != 0 ? y : z;
    default: break;  // math() sends no other op here
  }
  throw std::logic_error("math: not an elementwise op");
}

/// Softmax (same shape) or a reduction (the axis kept with size 1) along `axis` of x.
void along_axis(tl::MathOp op, const Shape& shape, const std::vector<double>& x, int axis, const Shape& out_shape,
                std::vector<double>& out) {
  const std::size_t ax = shape.index(axis);
  Shape expect = shape;
  if (op != kSoftmax) expect[ax] = 1;
  if (!(out_shape == expect))
    invalid("math " + op_name(op) + " along axis " + std::to_string(axis) + " of " + shape.str() + " gives " +
            expect.str() + ", not " + out_shape.str());
  std::size_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < ax; ++d) outer *= static_cast<std::size_t>(shape[d]);
  for (std::size_t d = ax + 1; d < shape.rank(); ++d) inner *= static_cast<std::size_t>(shape[d]);
  const auto len = static_cast<std::size_t>(shape[ax]);
  if (len == 0 && op != kSoftmax && op != kSum && outer * inner > 0)
    invalid("math " + op_name(op) + ": empty axis " + std::to_string(axis) + " of " + shape.str());

  for (std::size_t o = 0; o < outer; ++o)
    for (std::size_t i = 0; i < inner; ++i) {
      auto at = [&](std::size_t a) { return (o * len + a) * inner + i; };
      if (op == kSoftmax) {  // max, sub, exp, sum, div: the reference's expansion
        double m = -std::numeric_limits<double>::infinity(), sum = 0;
        for (std::size_t a = 0; a < len; ++a) m = nan_max(m, x[at(a)]);
        for (std::size_t a = 0; a < len; ++a) sum += out[at(a)] = std::exp(x[at(a)] - m);
        for (std::size_t a = 0; a < len; ++a) out[at(a)] /= sum;
        continue;
      }
      double r = op == kSum ? 0.0 : x[at(0)];
      for (std::size_t a = op == kSum ? 0 : 1; a < len; ++a)
        r = op == kSum ? r + x[at(a)] : op == kMax ? nan_max(r, x[at(a)]) : nan_min(r, x[at(a)]);
      out[o * inner + i] = r;
    }
}

}  // namespace

Value make_value(const Shape& shape, DType dtype, std::span<const double> elements) {
  if (elements.size() != static_cast<std::size_t>(shape.elements()))
    invalid("make_value: " + std::to_string(elements.size()) + " elements for shape " + shape.str() + " (" +
            std::to_string(shape.elements()) + ")");
  auto bytes = std::make_shared<Bytes>(elements.size() * dtype_size(dtype));
  encode_values(elements, dtype, bytes->data());
  return Value{std::move(bytes), shape, dtype};
}

std::vector<double> elements(const Value& v) {
  check_bytes(v);
  const std::size_t size = dtype_size(v.dtype), n = static_cast<std::size_t>(v.shape.elements());
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = decode_value(v.bytes->data() + i * size, v.dtype);
  return out;
}

Value gemm(const Value& a, const Value& b, DType out_dtype, std::span<const DataOp::Epilogue> epilogue,
           std::span<const Value> operands, std::uint32_t tile_k, const DataCompute* custom) {
  return gemm_stacked({&a, 1}, b, out_dtype, epilogue, operands, tile_k, custom).front();
}

// Stacking the A operands into one Eigen product would round differently:
// Eigen picks its kernel by shape (gemv for one row, a coefficient-wise loop
// for tiny products, register-block remainders by row position), so a row's
// result would depend on its neighbours. The batch instead shares the
// decoding of B and the epilogue operands, and is bit-identical to gemm.
std::vector<Value> gemm_stacked(std::span<const Value> as, const Value& b, DType out_dtype,
                                std::span<const DataOp::Epilogue> epilogue, std::span<const Value> operands,
                                std::uint32_t tile_k, const DataCompute* custom) {
  if (as.empty()) return {};
  for (const Value& a : as) {
    check_shapes(a, b);
    if (a.dtype != as.front().dtype) {  // accumulation types may differ: one at a time
      std::vector<Value> out;
      for (const Value& x : as) out.push_back(gemm(x, b, out_dtype, epilogue, operands, tile_k, custom));
      return out;
    }
  }
  const DType ta = as.front().dtype, tb = b.dtype;
  if (ta == DType::kF64 || tb == DType::kF64)
    return multiply_all<double>(as, b, out_dtype, epilogue, operands, tile_k, custom);
  if (!is_float(ta) && !is_float(tb))
    return multiply_all<std::int64_t>(as, b, out_dtype, epilogue, operands, tile_k, custom);
  return multiply_all<float>(as, b, out_dtype, epilogue, operands, tile_k, custom);
}

Value math(tl::MathOp op, std::span<const Value> in, int axis, const Shape& out_shape, DType out_dtype) {
  const std::size_t n = arity(op);
  if (in.size() != n)
    invalid("math " + op_name(op) + ": takes " + std::to_string(n) + " inputs, got " + std::to_string(in.size()));
  std::vector<std::vector<double>> x;
  for (const Value& v : in) x.push_back(elements(v));
  std::vector<double> out(static_cast<std::size_t>(out_shape.elements()));

  if (op == kSoftmax || op == kSum || op == kMax || op == kMin) {
    along_axis(op, in[0].shape, x[0], axis, out_shape, out);
  } else {
    // Broadcasting: per input, the stride of each output dimension in its own elements (0 where it has size 1).
    const std::size_t rank = out_shape.rank();
    std::vector<std::vector<std::size_t>> stride(n, std::vector<std::size_t>(rank, 0));
    for (std::size_t j = 0; j < n; ++j) {
      const Shape& s = in[j].shape;
      if (x[j].size() == 1) continue;
      bool fits = s.rank() == rank;
      std::size_t step = 1;
      for (std::size_t d = rank; fits && d-- > 0;) {
        fits = s[d] == out_shape[d] || s[d] == 1;
        stride[j][d] = s[d] == 1 ? 0 : step;
        step *= static_cast<std::size_t>(s[d]);
      }
      if (!fits) {
        std::string shapes;
        for (const Value& v : in) shapes += (shapes.empty() ? "" : ", ") + v.shape.str();
        invalid("math " + op_name(op) + ": inputs " + shapes + " do not broadcast to " + out_shape.str());
      }
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
      double v[3] = {};
      for (std::size_t j = 0; j < n; ++j) {
        std::size_t at = 0;
        if (x[j].size() != 1)
          for (std::size_t d = rank, rest = i; d-- > 0;) {
            const auto dim = static_cast<std::size_t>(out_shape[d]);
            at += (rest % dim) * stride[j][d];
            rest /= dim;
          }
        v[j] = x[j][at];
      }
      out[i] = elementwise(op, v[0], v[1], v[2]);
    }
  }
  return make_value(out_shape, out_dtype, out);
}

}  // namespace kbsim::data_pass
