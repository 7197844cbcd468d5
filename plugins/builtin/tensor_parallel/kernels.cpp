// The GEMM kernels the tensor-parallel layers launch (kbsim/rt/tensor_parallel.hpp):
//
//   tp-column-gemm       (x, W, out): each PE multiplies its replica of x by
//                        its column slice of W into its slice of out.
//   tp-row-partial-gemm  (x, W, y, M): each cube's pe0 sums, over its cube's
//                        PEs, x's column slice times W's matching row slice
//                        (one GEMM each, operands read from those PEs' HBM)
//                        into its cube's row of y.
#include "kbsim/pe/kernels.hpp"

#include "kbsim/plugin.hpp"

namespace kbsim::tensor_parallel {

namespace {

namespace tl = kbsim::tl;

void column_gemm(tl::Program& tl, const tl::Args& a) {
  const auto cube = static_cast<unsigned>(tl.program_id(1)), pe = static_cast<unsigned>(tl.program_id(0));
  const tl::TensorArg::Shard *x = a.tensor(0).shard(cube, pe), *w = a.tensor(1).shard(cube, pe),
                             *out = a.tensor(2).shard(cube, pe);
  if (!w || !out) return;  // more PEs than columns: this one has none
  if (!x)
    throw tl::Error("tp-column-gemm: x has no replica on cube " + std::to_string(cube) + " pe " + std::to_string(pe) +
                    " (place it on every PE)");
  tl.store(out->ptr, tl.dot(tl.load(x->ptr, x->shape), tl.load(w->ptr, w->shape)));
}

void row_partial_gemm(tl::Program& tl, const tl::Args& a) {
  const auto cube = static_cast<unsigned>(tl.program_id(1));
  if (tl.program_id(0) != 0) return;
  const tl::TensorArg &x = a.tensor(0), &w = a.tensor(1), &y = a.tensor(2);
  const tl::TensorArg::Shard* row = y.shard(cube, 0);
  if (!row) return;
  tl::Tensor acc;
  for (const tl::TensorArg::Shard& ws : w.shards) {
    if (ws.cube != cube) continue;
    const tl::TensorArg::Shard* xs = x.shard(cube, ws.pe);
    if (!xs)
      throw tl::Error("tp-row-partial-gemm: x has no slice on cube " + std::to_string(cube) + " pe " +
                      std::to_string(ws.pe) + " to match the weight's rows");
    const tl::Tensor part = tl.dot(tl.load(xs->ptr, xs->shape), tl.load(ws.ptr, ws.shape));
    acc = acc.valid() ? acc + part : part;
  }
  if (!acc.valid()) acc = tl.zeros({a.i64(3), row->shape.elements() / a.i64(3)});
  tl.store(row->ptr, acc);
}

}  // namespace

void add_kernels(PluginDescriptor& plugin) {
  add_kernel(plugin, "tp-column-gemm", &column_gemm,
             "ColumnParallelLinear's GEMM: each PE's x replica times its column slice of W (args x, W, out)");
  add_kernel(plugin, "tp-row-partial-gemm", &row_partial_gemm,
             "RowParallelLinear's partial: each cube's pe0 sums its PEs' slice products into its row (args x, W, y, "
             "M)");
}

}  // namespace kbsim::tensor_parallel
