// The collective benches: ccl-allreduce and pe2pe-latency.
#include "ccl_report.hpp"

KBSIM_PLUGIN("bench_ccl") {
  kbsim::bench_ccl::add_ccl_allreduce(plugin);
  kbsim::bench_ccl::add_pe2pe_latency(plugin);
}
