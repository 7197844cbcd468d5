// Megatron-style tensor parallelism (docs/model.md, "Tensor parallelism") on
// top of the host runtime and the distributed runtime: the TP group is the
// process group (rank = SIP), and a layer's weights are split over the ranks
// as Megatron splits them. Forward only, f16, no bias. The GEMMs run on the
// PEs (kernels of the tensor_parallel plugin); nothing is multiplied on the host.
//
//   tp::ParallelState state(dist);                 // shared by the spawn workers
//   dist.spawn([&](unsigned rank) {
//     rt.set_device(rank);
//     state.initialize_model_parallel(dist.get_world_size());
//     tp::ColumnParallelLinear fc1(rt, state, 512, 2048);
//     tp::RowParallelLinear fc2(rt, state, 2048, 512);
//     rt::Tensor y = fc2.forward(fc1.forward(x));  // every rank holds the whole output
//   }, dist.get_world_size());
#pragma once

#include <span>
#include <string>
#include <vector>

#include "kbsim/errors.hpp"
#include "kbsim/rt/distributed.hpp"
#include "kbsim/rt/runtime.hpp"

namespace kbsim::rt::tp {

/// Megatron's parallel_state: the tensor-model-parallel group is the process group.
class ParallelState {
 public:
  explicit ParallelState(Distributed& dist) : dist_(dist) {}
  /// Only a TP size equal to the process group's world size is supported (no data or pipeline parallelism).
  void initialize_model_parallel(unsigned tensor_model_parallel_size) {
    if (!dist_.is_initialized())
      throw BenchError("BAD_USE",
                       "initialize_model_parallel before init_process_group: the TP group is the process "
                       "group");
    if (tensor_model_parallel_size != dist_.get_world_size())
      throw BenchError("NOT_SUPPORTED", "initialize_model_parallel(" + std::to_string(tensor_model_parallel_size) +
                                            "): only a tensor-parallel size equal to the world size (" +
                                            std::to_string(dist_.get_world_size()) + ") is supported");
    size_ = tensor_model_parallel_size;
  }
  bool model_parallel_is_initialized() const noexcept { return size_ != 0; }
  unsigned get_tensor_model_parallel_world_size() const {
    require("get_tensor_model_parallel_world_size");
    return size_;
  }
  /// The calling spawn worker's rank.
  unsigned get_tensor_model_parallel_rank() const {
    require("get_tensor_model_parallel_rank");
    return dist_.get_rank();
  }
  Distributed& dist() const noexcept { return dist_; }

 private:
  void require(const char* what) const {
    if (!size_) throw BenchError("BAD_USE", std::string(what) + " before initialize_model_parallel");
  }
  Distributed& dist_;
  unsigned size_ = 0;
};

/// Every PE of every cube of the rank's SIP (0 = all).
inline constexpr DPPolicy kEveryPe{Split::kReplicate, Split::kReplicate, 0, 0};

/// Write a whole tensor's values (row-major, converted to its dtype): a layer's weight slice.
inline void write_values(Runtime& rt, const Tensor& t, std::span<const double> values) {
  if (values.size() != static_cast<std::size_t>(t.shape().elements()))
    throw BenchError("BAD_USE",
                     "load_weight: " + std::to_string(values.size()) + " values for a weight of " + t.shape().str());
  std::vector<std::byte> bytes(t.nbytes());
  encode_values(values, t.dtype(), bytes.data());
  rt.write(t, bytes);
}

/// Y = X W with W's columns split over the ranks: rank r holds W[:, r*k : (r+1)*k], k = out / world, and
/// computes its k output columns, themselves split over its cubes and PEs (column-wise, column-wise).
class ColumnParallelLinear {
 public:
  ColumnParallelLinear(Runtime& rt, const ParallelState& state, std::int64_t in_features, std::int64_t out_features)
      : rt_(rt), in_(in_features) {
    const unsigned ws = state.get_tensor_model_parallel_world_size();
    if (in_features <= 0 || out_features <= 0 || out_features % ws != 0)
      throw BenchError("BAD_USE", "ColumnParallelLinear(" + std::to_string(in_features) + ", " +
                                      std::to_string(out_features) +
                                      "): out_features must be a positive multiple of "
                                      "the world size " +
                                      std::to_string(ws));
    k_local_ = out_features / ws;
    weight_ = rt.zeros({in_features, k_local_}, DType::kF16, {Split::kColumnWise, Split::kColumnWise, 0, 0},
                       "col_parallel_w");
  }
  /// This rank's (in, out / world) weight slice: zeros until loaded.
  const Tensor& weight() const noexcept { return weight_; }
  void load_weight(std::span<const double> values) { write_values(rt_, weight_, values); }
  /// The last forward's GEMM launch.
  const LaunchResult& last_launch() const noexcept { return last_; }
  /// x: (M, in), replicated on every PE of the rank's SIP (kEveryPe). Returns (M, out / world), column-sharded.
  Tensor forward(const Tensor& x) {
    check_input(x);
    Tensor out = rt_.empty({x.shape()[0], k_local_}, DType::kF16, {Split::kColumnWise, Split::kColumnWise, 0, 0},
                           "col_parallel_out");
    last_ = rt_.wait(rt_.launch("tp-column-gemm", {x, weight_, out}));
    return out;
  }

 private:
  void check_input(const Tensor& x) const {
    if (x.shape().rank() != 2 || x.shape()[1] != in_)
      throw BenchError("BAD_USE", "ColumnParallelLinear.forward: x is " + x.shape().str() + ", (M, " +
                                      std::to_string(in_) + ") expected");
  }
  Runtime& rt_;
  std::int64_t in_, k_local_ = 0;
  Tensor weight_;
  LaunchResult last_;
};

/// Y = X W with W's rows split over the ranks: rank r holds W[r*n : (r+1)*n, :], n = in / world, and its input is
/// the column-parallel layer's output (its n columns, split over cubes and PEs). Each cube's pe0 sums its cube's
/// partial products (one GEMM per PE's slice); all_reduce then sums the cubes of every rank at once: every cube of
/// every rank ends with the whole (M, out) (docs/model.md, "Tensor parallelism").
class RowParallelLinear {
 public:
  RowParallelLinear(Runtime& rt, const ParallelState& state, std::int64_t in_features, std::int64_t out_features)
      : rt_(rt), dist_(state.dist()), out_(out_features) {
    const unsigned ws = state.get_tensor_model_parallel_world_size();
    if (in_features <= 0 || out_features <= 0 || in_features % ws != 0)
      throw BenchError("BAD_USE", "RowParallelLinear(" + std::to_string(in_features) + ", " +
                                      std::to_string(out_features) +
                                      "): in_features must be a positive multiple of "
                                      "the world size " +
                                      std::to_string(ws));
    n_local_ = in_features / ws;
    weight_ =
        rt.zeros({n_local_, out_features}, DType::kF16, {Split::kRowWise, Split::kRowWise, 0, 0}, "row_parallel_w");
  }
  const Tensor& weight() const noexcept { return weight_; }
  void load_weight(std::span<const double> values) { write_values(rt_, weight_, values); }
  /// The last forward's partial-GEMM launch (the all_reduce is in Distributed::collectives()).
  const LaunchResult& last_launch() const noexcept { return last_; }
  /// x: (M, in / world), column-sharded as ColumnParallelLinear::forward leaves it. Returns a (cubes, M x out)
  /// tensor with one row per cube's pe0; after the all_reduce every row holds the whole output.
  Tensor forward(const Tensor& x) {
    if (x.shape().rank() != 2 || x.shape()[1] != n_local_)
      throw BenchError("BAD_USE", "RowParallelLinear.forward: x is " + x.shape().str() + ", (M, " +
                                      std::to_string(n_local_) + ") expected");
    const std::int64_t cubes = rt_.cubes_per_sip();
    Tensor y = rt_.empty({cubes, x.shape()[0] * out_}, DType::kF16, {Split::kRowWise, Split::kReplicate, 1, 0},
                         "row_parallel_partial");
    LaunchOptions one_pe_per_cube;
    one_pe_per_cube.grid_pes = 1;
    one_pe_per_cube.grid_cubes = static_cast<unsigned>(cubes);
    one_pe_per_cube.auto_dim_remap = false;  // the kernel takes the global row count
    last_ = rt_.wait(rt_.launch("tp-row-partial-gemm", {x, weight_, y, x.shape()[0]}, one_pe_per_cube));
    dist_.all_reduce(y);
    return y;
  }

 private:
  Runtime& rt_;
  Distributed& dist_;
  std::int64_t out_, n_local_ = 0;
  Tensor weight_;
  LaunchResult last_;
};

/// Megatron's embedding table split over the ranks by vocabulary rows. Not supported: the reference leaves it a stub
/// (it would need an all-gather collective first), so constructing one throws NOT_SUPPORTED, before anything is
/// allocated. The signature is the other layers', so a model written for it fails at the layer, not at compile time.
class VocabParallelEmbedding {
 public:
  VocabParallelEmbedding(Runtime&, const ParallelState&, std::int64_t num_embeddings, std::int64_t embedding_dim) {
    throw BenchError("NOT_SUPPORTED", "VocabParallelEmbedding(" + std::to_string(num_embeddings) + ", " +
                                          std::to_string(embedding_dim) +
                                          ") is not supported: an embedding table split over the ranks by "
                                          "vocabulary is not modelled (it would need an all-gather collective "
                                          "first)");
  }
};

// --- Megatron's mappings, forward ---
/// Identity in the forward pass (its backward would all-reduce the gradient).
inline const Tensor& copy_to_tp_region(const Tensor& x) { return x; }
/// all_reduce (sum) of x over the TP group, in place.
inline const Tensor& reduce_from_tp_region(Distributed& dist, const Tensor& x) {
  dist.all_reduce(x);
  return x;
}
[[noreturn]] inline void scatter_to_tp_region(const Tensor&) {
  throw BenchError("NOT_SUPPORTED", "scatter_to_tp_region is not supported (it needs a split collective)");
}
[[noreturn]] inline void gather_from_tp_region(const Tensor&) {
  throw BenchError("NOT_SUPPORTED", "gather_from_tp_region is not supported (it needs an all-gather collective)");
}

}  // namespace kbsim::rt::tp
