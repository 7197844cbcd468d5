// libFuzzer harness: the topology loaders on arbitrary bytes. The input is a
// topology document, optionally followed by a line "#set" and one --set
// override per line. It goes through the explicit form (with the overrides)
// and, when it is in the AHBM form, through that front-end's compiler. Every
// input must end in a graph or a kbsim::Error (a configuration error naming
// its position); a crash, a sanitizer report, a leak or any other exception is
// a finding. Run by `bash scripts/setup.sh fuzz`.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "build.hpp"
#include "kbsim/config/yaml.hpp"
#include "plugin/registry.hpp"
#include "topology/topology.hpp"

namespace {

/// No component declares anything: the front-end's lookups find no parameters.
class NoDeclarations final : public kbsim::config::Components {
 public:
  kbsim::Params resolve(const std::string&, const std::vector<kbsim::RawParam>&, const std::string&) const override {
    return kbsim::Params(std::vector<kbsim::ParamEntry>{});
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> overrides;
  const std::string marker = "\n#set\n";
  if (auto cut = text.find(marker); cut != std::string::npos) {
    std::istringstream lines(text.substr(cut + marker.size()));
    for (std::string line; std::getline(lines, line);)
      if (!line.empty()) overrides.push_back(line);
    text.resize(cut);
  }
  static const auto* registry = new kbsim::core::Registry;  // no plugins: the core's explicit form
  try {
    kbsim::core::parse_topology(text, "fuzz.yaml", overrides, *registry);
  } catch (const kbsim::Error&) {
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception&) {
    return 0;  // the loaders report these as syntax errors (above)
  }
  try {
    kbsim::config::YamlSource src("fuzz.yaml", root);
    kbsim::config::Origins origins(src);
    kbsim::core::apply_overrides(src, origins, overrides);
    if (kbsim::ahbm_topology::is_ahbm(src.root())) kbsim::ahbm_topology::compile(src, origins, NoDeclarations{});
  } catch (const kbsim::Error&) {
  }
  return 0;
}
