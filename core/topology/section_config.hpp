// Configuration sections (kbsim/config_section.hpp): a section's file read
// like the topology, its `--set NAME.*` overrides applied to the tree first,
// every key checked against the section's declarations and those of the
// extensions it configures.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kbsim/config_section.hpp"

namespace kbsim::core {

class Registry;

/// The overrides among `sets` that address the section `name` ("NAME.KEY=VALUE"), as typed, taken out of `sets`.
std::vector<std::string> take_section_overrides(std::vector<std::string>& sets, const std::string& name);

/// Whether a --set addresses one of the declared sections rather than the topology.
bool addresses_section(const std::string& set, const Registry& registry);

/// Read and check a section: from `file`, or every value its default when `file` is empty. `overrides` are
/// "NAME.defaults.KEY=VALUE" and "NAME.ENTRIES.ENTRY.KEY=VALUE", with "NAME.KEY=VALUE" and "NAME.ENTRY.KEY=VALUE"
/// as short forms; an error names an override as typed.
Section load_section(const SectionInfo& info, const std::filesystem::path& file,
                     const std::vector<std::string>& overrides, const Registry& registry);

/// Same, from YAML text (for tests); `name` stands for the file in messages.
Section parse_section(const SectionInfo& info, const std::string& text, const std::string& name,
                      const std::vector<std::string>& overrides, const Registry& registry);

}  // namespace kbsim::core
