// libFuzzer harness: components.yaml (the implementation-name mappings) on
// arbitrary bytes, loaded into a registry without plugins. Every input must be
// accepted or refused with a kbsim::Error; anything else is a finding. Run by
// `bash scripts/setup.sh fuzz`.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "plugin/registry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string file = "/tmp/kbsim-fuzz-components-" + std::to_string(::getpid()) + ".yaml";
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  kbsim::core::Registry registry;
  try {
    registry.load_components_file(file);
  } catch (const kbsim::Error&) {
  }
  return 0;
}
