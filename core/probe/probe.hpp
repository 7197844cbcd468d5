// `kbsim probe`: latency and bandwidth of the memory paths of an AHBM system,
// case by case, with the reference's invariants (ADR-0049).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kbsim::core {
class Registry;
}

namespace kbsim::core::probe {

struct Options {
  std::string case_name = "all";
  bool json = false;
  std::uint64_t bytes = 32768;
};

/// Run the probe and print its report; returns the exit code (0 if every invariant passes).
int run(const Registry& registry, const std::filesystem::path& topology, const std::vector<std::string>& overrides,
        const Options& options);

}  // namespace kbsim::core::probe
