// The QKV projection benches (qkv-gemm, qkv-gemm-multi-pe, gpt3-qkv) and their
// kernel, registered with the GEMM benches' plugin.
#pragma once

#include "kbsim/plugin.hpp"

namespace kbsim::bench_gemm {

void add_qkv_benches(PluginDescriptor& plugin);

}  // namespace kbsim::bench_gemm
