// `kbsim list` and `kbsim info`: what the registry knows, for people.
#pragma once

#include <set>
#include <string>

namespace kbsim::core {
class Registry;
}

namespace kbsim::cli {

/// The kinds of model extensions the loaded plugins registered (e.g. "kernel").
std::set<std::string> extension_kinds(const core::Registry& reg);
void print_list(const core::Registry& reg, const std::string& what);
/// Throws UsageError (with the closest names) when nothing has that name.
void print_info(const core::Registry& reg, const std::string& name);

}  // namespace kbsim::cli
