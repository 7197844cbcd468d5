// Attention: the mesh attention kernels and the GQA Llama-70B panels.
#include "kbsim/plugin.hpp"

namespace kbsim::attention {
void add_kernels(PluginDescriptor& plugin);
void add_gqa(PluginDescriptor& plugin);
}  // namespace kbsim::attention

KBSIM_PLUGIN("bench_attention") {
  kbsim::attention::add_kernels(plugin);
  kbsim::attention::add_gqa(plugin);
}
