// `kbsim list` and `kbsim info`: what the registry knows, for people.
#pragma once

#include <string>

namespace kbsim::core {
class Registry;
}

namespace kbsim::cli {

void print_list(const core::Registry& reg, const std::string& what);
/// Throws UsageError (with the closest names) when nothing has that name.
void print_info(const core::Registry& reg, const std::string& name);

}  // namespace kbsim::cli
