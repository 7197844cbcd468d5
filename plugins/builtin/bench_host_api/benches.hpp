// The host API benches: the reference's host programs, ported.
#pragma once

#include "kbsim/plugin.hpp"

void register_va_offset(kbsim::PluginDescriptor& plugin);  // va-offset-verify
void register_host_tour(kbsim::PluginDescriptor& plugin);  // host-api-tour
