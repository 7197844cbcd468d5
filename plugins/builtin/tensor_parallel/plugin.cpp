// Tensor parallelism: the kernels of kbsim/rt/tensor_parallel.hpp's layers and the tp-mlp bench.
#include "kbsim/plugin.hpp"

namespace kbsim::tensor_parallel {
void add_kernels(PluginDescriptor& plugin);
void add_tp_mlp(PluginDescriptor& plugin);
}  // namespace kbsim::tensor_parallel

KBSIM_PLUGIN("tensor_parallel") {
  kbsim::tensor_parallel::add_kernels(plugin);
  kbsim::tensor_parallel::add_tp_mlp(plugin);
}
