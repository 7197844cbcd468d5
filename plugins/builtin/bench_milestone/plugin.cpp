// The milestone benches: the reference's evaluations, each one command that
// runs its sweep (in parallel: kbsim run -j N, or mpirun) and writes a folder
// of tables, SVG figures and index.html.
#include "kbsim/plugin.hpp"

namespace kbsim::milestone {
void add_milestone_ccl(PluginDescriptor& plugin);
void add_milestone_gemm(PluginDescriptor& plugin);
void add_milestone_gqa(PluginDescriptor& plugin);
void add_milestone_llama(PluginDescriptor& plugin);
}  // namespace kbsim::milestone

KBSIM_PLUGIN("bench_milestone") {
  kbsim::milestone::add_milestone_ccl(plugin);
  kbsim::milestone::add_milestone_gemm(plugin);
  kbsim::milestone::add_milestone_gqa(plugin);
  kbsim::milestone::add_milestone_llama(plugin);
}
