// Configuration sections: a configuration file a plugin declares, which the
// core finds, reads and checks like the topology (unknown keys and wrong types
// are errors naming file:line:column) without knowing what it means. A section
// named NAME is
//   - the file NAME.yaml beside the default topology.yaml (absent: every value
//     its default), or the one `kbsim run --NAME FILE` gives;
//   - overridden by `--set NAME.KEY=VALUE`;
//   - a `defaults` map of the parameters the section declares, and, when it
//     configures an extension kind, a map (`entries_key`) with one entry per
//     registered extension of that kind: its own parameters (Extension::params)
//     and any of the defaults to override. `--set NAME.KEY=VALUE` sets a
//     default, `--set NAME.ENTRY.KEY=VALUE` an entry's value.
// A bench reads it with BenchContext::section(NAME); results.json records the
// sections a bench read. A section `policy` configuring extensions of kind
// "scheduler" (the PE kit's collective configuration is a real one):
//
//   defaults:                 # shared by every entry
//     scheduler: fifo         # the selector: the entry in use
//     queue_depth: 4
//   schedulers:               # entries_key: one per extension of kind "scheduler"
//     round_robin: { quantum_ns: 20, queue_depth: 8 }
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kbsim/errors.hpp"
#include "kbsim/extension.hpp"
#include "kbsim/params.hpp"

namespace kbsim {

/// What a plugin declares (add_section, kbsim/plugin.hpp).
struct SectionInfo {
  std::string name;  ///< the file's stem, the --NAME option, the --set prefix; lower case
  std::string summary;
  std::vector<ParamSpec> defaults;  ///< the `defaults` map
  std::string entry_kind;           ///< the extension kind configured per entry (empty: none)
  std::string entries_key;          ///< the key of the entries' map (e.g. "schedulers")
  std::string entry_words;          ///< how messages name one entry (e.g. "scheduler")
  /// A string parameter among the defaults that names the entry in use (empty: none). Its value must be a
  /// registered extension of entry_kind; an entry's parameters do not include it.
  std::string selector;
};

/// A section as read for a run.
struct Section {
  struct Entry {
    const Extension* extension = nullptr;
    Params params;  ///< its own and the defaults, its entry over the defaults map
  };
  const SectionInfo* info = nullptr;
  std::string source;  ///< the file it was read from, or "(built-in NAME defaults)"
  Params defaults;
  std::string selected;                  ///< the selector's value ("" without a selector)
  std::map<std::string, Entry> entries;  ///< every registered extension of entry_kind, written in the file or not

  /// The entry of `name` (the selected one when empty); ConfigError if there is none.
  const Entry& entry(const std::string& name = {}) const {
    const std::string& n = name.empty() ? selected : name;
    auto it = entries.find(n);
    if (it == entries.end())
      throw ConfigError(source + ": no " + (info ? info->entry_words : std::string("entry")) + " named '" + n +
                        "' is registered");
    return it->second;
  }
};

}  // namespace kbsim
