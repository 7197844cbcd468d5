// The data pass's arithmetic (docs/model.md, "Execution"): GEMM and every tl
// math op on tensor values, with Eigen. Pure functions; no simulation state.
#pragma once

#include <span>

#include "kbsim/pe/data_op.hpp"

namespace kbsim::data_pass {

/// A tensor value: immutable bytes plus how to read them.
struct Value {
  BytesPtr bytes;
  Shape shape;
  DType dtype = DType::kF16;
  std::uint64_t nbytes() const noexcept { return static_cast<std::uint64_t>(shape.elements()) * dtype_size(dtype); }
};

/// A value of `shape` and `dtype` holding `elements` (row-major), each rounded to `dtype`.
Value make_value(const Shape& shape, DType dtype, std::span<const double> elements);
/// The elements of `v` as doubles (row-major).
std::vector<double> elements(const Value& v);

/// out = a (M,K) x b (K,N), accumulated in f32 for f16/bf16/f32 inputs (f64 in
/// f64, integers exactly in 64 bits), then the epilogue, then rounded to
/// `out_dtype`. k_tile-scope epilogue ops apply to each K-tile's partial
/// product (tiles of `tile_k`; 0 = all of K) before it is accumulated;
/// output_tile-scope ops to the accumulated result. `operands` is the whole
/// input list the epilogue's operand indices refer to. `custom`, when given,
/// computes every (partial) product for float inputs instead of Eigen.
Value gemm(const Value& a, const Value& b, DType out_dtype, std::span<const DataOp::Epilogue> epilogue,
           std::span<const Value> operands, std::uint32_t tile_k, const DataCompute* custom);

/// The same GEMM for several A operands that share one B (a batch,
/// docs/model.md "Execution"): B and the epilogue operands are decoded once,
/// each A still gets its own product, so results equal gemm's bit for bit.
/// Results in order.
std::vector<Value> gemm_stacked(std::span<const Value> as, const Value& b, DType out_dtype,
                                std::span<const DataOp::Epilogue> epilogue, std::span<const Value> operands,
                                std::uint32_t tile_k, const DataCompute* custom);

/// Any tl math op (not the GEMM epilogue ops): elementwise ops broadcast
/// single-element inputs; softmax and the reductions work along `axis`
/// (reductions keep it with size 1). Computed in double, rounded to `out_dtype`.
Value math(tl::MathOp op, std::span<const Value> in, int axis, const Shape& out_shape, DType out_dtype);

}  // namespace kbsim::data_pass
