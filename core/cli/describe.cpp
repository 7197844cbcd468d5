#include "cli/describe.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "kbsim/text.hpp"
#include "plugin/registry.hpp"

namespace kbsim::cli {

namespace {

std::vector<std::string> impls_of(const core::Registry& reg, const std::string& type) {
  std::vector<std::string> out;
  for (const auto& [impl, entry] : reg.impls())
    if (entry.type == type) out.push_back(impl);
  return out;
}

void print_params(const std::vector<ParamSpec>& params) {
  std::printf("parameters:\n");
  if (params.empty()) std::printf("  (none)\n");
  for (const auto& p : params) {
    std::string unit(unit_of(p.name));
    std::printf("  %-20s %-7s %s%s  %s%s\n", p.name.c_str(), to_string(p.type), p.required ? "required" : "default ",
                p.required ? "" : format_value(p.default_value).c_str(), p.doc.c_str(),
                unit.empty() ? "" : (" [" + unit + "]").c_str());
  }
}

/// One `kbsim list` section: a title, then name, library and summary of each entry.
template <class Map, class Summary>
void section(bool shown, const char* title, const char* none, const Map& entries, Summary summary) {
  if (!shown) return;
  std::printf("%s\n", title);
  if (entries.empty()) std::printf("%s", none);
  for (const auto& [name, entry] : entries)
    std::printf("  %-22s %-26s %s\n", name.c_str(), entry.from.library.c_str(), summary(entry).c_str());
}

/// The configuration section that configures extensions of `kind`, or nullptr.
const SectionInfo* section_of_kind(const core::Registry& reg, const std::string& kind) {
  for (const auto& [name, entry] : reg.sections())
    if (entry.type->entry_kind == kind) return entry.type;
  return nullptr;
}

/// How `kbsim list` titles the extensions of one kind: the entry words of the section that configures them, in the
/// plural, else the kind's ("kernels").
std::string kind_title(const core::Registry& reg, const std::string& kind) {
  const SectionInfo* s = section_of_kind(reg, kind);
  return (s && !s->entry_words.empty() ? s->entry_words : kind) + "s";
}

void print_extension(const core::Registry& reg, const Extension& ext, const core::Registry::Provided& from) {
  const SectionInfo* s = section_of_kind(reg, ext.kind);
  std::printf("%s %s: %s\n", s && !s->entry_words.empty() ? s->entry_words.c_str() : ext.kind.c_str(), ext.name.c_str(),
              ext.summary.c_str());
  std::printf("library: %s (%s)\n", from.library.c_str(), from.path.c_str());
  for (const std::string& line : ext.details) std::printf("%s\n", line.c_str());
  if (!s) return;
  std::printf("its own parameters (%s.yaml %s.%s, or --set %s.%s.KEY=VALUE):\n", s->name.c_str(),
              s->entries_key.c_str(), ext.name.c_str(), s->name.c_str(), ext.name.c_str());
  print_params(ext.params);
  std::printf("shared parameters (%s.yaml defaults, or --set %s.KEY=VALUE; an entry of %s may override them):\n",
              s->name.c_str(), s->name.c_str(), s->entries_key.c_str());
  print_params(s->defaults);
}

}  // namespace

std::set<std::string> extension_kinds(const core::Registry& reg) {
  std::set<std::string> kinds;
  for (const auto& [key, entry] : reg.extensions()) kinds.insert(key.first);
  return kinds;
}

void print_list(const core::Registry& reg, const std::string& what) {
  std::vector<std::string> known = {"all",       "components", "benches",  "commands", "services",
                                    "observers", "frontends",  "sections", "libraries"};
  // An extension kind by its name or its plural ("kernel", "kernels").
  auto lists_kind = [&](const std::string& kind) { return what == kind || what == kind + "s"; };
  for (const std::string& kind : extension_kinds(reg)) {
    if (std::find(known.begin(), known.end(), kind + "s") == known.end()) known.push_back(kind + "s");
    if (lists_kind(kind)) known.push_back(what);
  }
  if (std::find(known.begin(), known.end(), what) == known.end())
    throw UsageError("list: nothing to list as '" + what + "'" + suggest(what, known));
  bool all = what == "all";
  if (all || what == "components") {
    std::printf("components (type, library: implementation names):\n");
    for (const auto& [type, entry] : reg.components()) {
      auto impls = impls_of(reg, type);
      std::printf("  %-22s %-26s %s\n", type.c_str(), entry.from.library.c_str(),
                  impls.empty() ? "(no implementation name)" : join(impls).c_str());
    }
  }
  if (all || what == "benches") {
    std::printf("benches (kbsim run --bench NAME, or its number):\n");
    unsigned k = 0;
    for (const auto& [name, entry] : reg.benches())
      std::printf("  %2u  %-22s %s%s\n", ++k, name.c_str(), entry.type->info.reads_topology ? "" : "(own system) ",
                  entry.type->info.summary.c_str());
  }
  section(all || what == "commands", "commands (plugin-provided subcommands):", "  (none registered)\n", reg.commands(),
          [](const auto& e) { return e.type->info.summary; });
  section(all || what == "services", "services (name, library: summary):", "  (none registered)\n", reg.services(),
          [](const auto& e) { return e.type->info.summary; });
  section(all || what == "observers", "run observers (name, library: summary):", "  (none registered)\n",
          reg.observers(), [](const auto& e) { return e.type->info.summary; });
  section(all || what == "frontends", "topology front-ends (name, library: summary):",
          "  (none registered; the explicit nodes+edges form is built in)\n", reg.frontends(),
          [](const auto& e) { return e.type->summary; });
  section(all || what == "sections",
          "configuration sections (NAME.yaml, kbsim run --NAME FILE; library: summary):", "  (none registered)\n",
          reg.sections(), [](const auto& e) { return e.type->summary; });
  for (const std::string& kind : extension_kinds(reg)) {
    if (!all && !lists_kind(kind)) continue;
    std::printf("%s (name, library: summary):\n", kind_title(reg, kind).c_str());
    for (const auto& [key, entry] : reg.extensions())
      if (key.first == kind)
        std::printf("  %-22s %-26s %s\n", key.second.c_str(), entry.from.library.c_str(), entry.ext->summary.c_str());
  }

  if (all || what == "libraries") {
    std::printf("plugin libraries:\n");
    for (const auto& l : reg.libraries())
      std::printf("  %-26s %-12s %s\n", l.name.c_str(), l.build_tag.c_str(), l.path.c_str());
  }
}

void print_info(const core::Registry& reg, const std::string& name) {
  std::string type = name;
  if (auto it = reg.impls().find(name); it != reg.impls().end()) type = it->second.type;
  if (auto it = reg.components().find(type); it != reg.components().end()) {
    const ComponentInfo& info = it->second.type->info;
    std::printf("component %s: %s\n", info.type.c_str(), info.summary.c_str());
    std::printf("library: %s (%s)\n", it->second.from.library.c_str(), it->second.from.path.c_str());
    auto impls = impls_of(reg, info.type);
    std::printf("implementation names: %s\n", impls.empty() ? "(none)" : join(impls).c_str());
    std::printf("receives: %s\n", info.flit_aware ? "flits (forwards flit by flit)" : "whole messages");
    print_params(info.params);
    std::printf("ports (edge kinds):\n");
    for (const auto& p : info.ports) std::printf("  %-20s %s\n", p.label.c_str(), p.doc.c_str());
    std::printf("statistics:\n");
    if (info.stats.empty()) std::printf("  (none)\n");
    for (const auto& s : info.stats)
      std::printf("  %-20s %-8s %s%s\n", s.name.c_str(), s.kind == StatKind::kCounter ? "counter" : "value",
                  s.doc.c_str(), s.unit.empty() ? "" : (" [" + s.unit + "]").c_str());
    return;
  }
  if (auto it = reg.benches().find(name); it != reg.benches().end()) {
    const BenchInfo& info = it->second.type->info;
    std::printf("bench %s: %s\n", info.name.c_str(), info.summary.c_str());
    std::printf("library: %s (%s)\n", it->second.from.library.c_str(), it->second.from.path.c_str());
    std::printf("topology: %s\n", info.reads_topology
                                      ? "runs on the configured one (--topology, --set)"
                                      : "builds its own system (an explicit --topology or topology --set is refused)");
    print_params(info.params);
    return;
  }
  if (auto it = reg.commands().find(name); it != reg.commands().end()) {
    const CommandInfo& info = it->second.type->info;
    std::printf("command %s: %s\n", info.name.c_str(), info.summary.c_str());
    std::printf("library: %s (%s)\n", it->second.from.library.c_str(), it->second.from.path.c_str());
    std::printf("options (kbsim %s --NAME VALUE; bool options are flags):\n", info.name.c_str());
    print_params(info.options);
    return;
  }
  if (auto it = reg.services().find(name); it != reg.services().end()) {
    std::printf("service %s: %s\n", name.c_str(), it->second.type->info.summary.c_str());
    std::printf("library: %s (%s)\n", it->second.from.library.c_str(), it->second.from.path.c_str());
    return;
  }
  if (auto it = reg.observers().find(name); it != reg.observers().end()) {
    std::printf("run observer %s: %s\n", name.c_str(), it->second.type->info.summary.c_str());
    std::printf("library: %s (%s)\n", it->second.from.library.c_str(), it->second.from.path.c_str());
    return;
  }
  if (auto it = reg.frontends().find(name); it != reg.frontends().end()) {
    std::printf("topology front-end %s: %s\n", name.c_str(), it->second.type->summary.c_str());
    std::printf("library: %s (%s)\n", it->second.from.library.c_str(), it->second.from.path.c_str());
    return;
  }
  if (auto it = reg.sections().find(name); it != reg.sections().end()) {
    const SectionInfo& s = *it->second.type;
    std::printf("configuration section %s: %s\n", name.c_str(), s.summary.c_str());
    std::printf("library: %s (%s)\n", it->second.from.library.c_str(), it->second.from.path.c_str());
    std::printf("file: %s.yaml beside topology.yaml, or kbsim run --%s FILE; --set %s.KEY=VALUE\n", name.c_str(),
                name.c_str(), name.c_str());
    if (!s.entry_kind.empty())
      std::printf("entries: %s, one per %s (kbsim list %s)\n", s.entries_key.c_str(), s.entry_words.c_str(),
                  s.entry_kind.c_str());
    std::printf("defaults ");
    print_params(s.defaults);
    return;
  }
  for (const auto& [key, entry] : reg.extensions())
    if (key.second == name) return print_extension(reg, *entry.ext, entry.from);
  std::vector<std::string> names;
  for (const auto& [n, e] : reg.impls()) names.push_back(n);
  for (const auto& [n, e] : reg.components()) names.push_back(n);
  for (const auto& [n, e] : reg.benches()) names.push_back(n);
  throw UsageError("nothing named '" + name + "'" + suggest(name, names));
}

}  // namespace kbsim::cli
