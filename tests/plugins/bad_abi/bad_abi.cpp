// A plugin that claims to be built for another ABI version.
#include "kbsim/plugin.hpp"

namespace {
const kbsim::PluginDescriptor* entry() {
  static const kbsim::PluginDescriptor d{999, "gcc-0.0 abi0", "bad_abi", {}, {}, {}, {}, {}, {}, {}, {}, {}};
  return &d;
}
}  // namespace

BOOST_DLL_ALIAS(entry, kbsim_plugin)
