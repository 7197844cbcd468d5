// A plugin library that crashes while it is loaded: in a static initializer, or in its entry point when
// KBSIM_TEST_CRASH_IN=entry. The crash handler must name this library (exit 7), not kbsim.
#include <csignal>
#include <cstdlib>
#include <string_view>

#include "kbsim/plugin.hpp"

namespace {
bool crash_in_entry() {
  const char* where = std::getenv("KBSIM_TEST_CRASH_IN");
  return where != nullptr && std::string_view(where) == "entry";
}

const int g_initialized = [] {
  if (!crash_in_entry()) std::raise(SIGSEGV);
  return 1;
}();
}  // namespace

KBSIM_PLUGIN("test_crash_on_load") {
  (void)plugin;
  if (g_initialized) std::raise(SIGSEGV);
}
