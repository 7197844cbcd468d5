// bench_host_api: host programs written the reference's way (docs/model.md, "The host runtime").
#include "benches.hpp"

KBSIM_PLUGIN("bench_host_api") {
  register_va_offset(plugin);
  register_host_tour(plugin);
}
