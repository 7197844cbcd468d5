// What the GEMM benches compute on the host: deterministic f16 operands, the
// product the hardware should give (Eigen: f16 operands, f32 accumulation, f16
// result), and the --verify-data check of a result read back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kbsim/bench.hpp"
#include "kbsim/tl/dtype.hpp"

namespace kbsim::bench_gemm {

/// Deterministic operand values in [-1, 1): each a multiple of 1/1024 (one of 2,048), exact in f16.
std::vector<double> values(std::int64_t n, unsigned seed);
/// The f16 encoding of values(n, seed), made without the values (the timing pass needs the bytes only).
std::vector<std::byte> operand(std::int64_t n, unsigned seed);
/// C = A x B (row-major, m x k times k x n; then relu) as the hardware defines it.
std::vector<double> reference(const std::vector<double>& a, const std::vector<double>& b, std::int64_t m,
                              std::int64_t k, std::int64_t n, bool relu = false);
/// BenchError DATA_MISMATCH naming the first bad element of `name` unless `got` (f16) is `want`; else a note.
void check(BenchContext& ctx, const std::string& name, const std::vector<std::byte>& got,
           const std::vector<double>& want, const Shape& shape);

}  // namespace kbsim::bench_gemm
