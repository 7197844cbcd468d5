// The layers hold: every quoted #include in core/, the SDK and the plugins is
// checked against the documented order (docs/architecture.md, "What depends on
// what"). A core module includes only modules below it; the core sees the
// SDK's base headers and its config and json kits, never a model kit; the
// base SDK includes no kit; each kit only the kits below it; a plugin only
// SDK headers and files of its own folder.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace kbsim {
namespace {

namespace fs = std::filesystem;

/// Each core module and the modules it may include (besides itself).
const std::map<std::string, std::set<std::string>> kCoreModules = {
    {"sim", {}},
    {"fabric", {"sim"}},
    {"plugin", {}},
    {"topology", {"plugin"}},
    {"component", {"sim", "fabric", "plugin"}},
    {"split", {"component", "sim", "fabric", "plugin", "cluster"}},
    {"report", {"split", "component", "plugin"}},
    {"cluster", {}},
    {"run", {"split", "component", "topology", "report", "plugin", "sim", "cluster"}},
    {"cli", {"run", "report", "split", "component", "topology", "plugin", "fabric", "sim", "cluster"}},
    {"testing", {"run", "component", "topology", "plugin", "fabric", "sim"}},
};

/// Each SDK kit (a folder of sdk/include/kbsim; "" = the base) and the kits it may include.
const std::map<std::string, std::set<std::string>> kKits = {
    {"", {}},
    {"config", {""}},
    {"json", {""}},
    {"tl", {""}},
    {"ahbm", {"", "tl"}},
    {"pe", {"", "tl", "ahbm"}},
    {"rt", {"", "tl", "ahbm", "pe"}},
};
/// The kits the core may include.
const std::set<std::string> kCoreKits = {"", "config", "json"};

struct Include {
  std::string file;  ///< the including file, relative to the source root
  int line;
  std::string target;  ///< what it includes, as written
};

/// The target of an `#include` line we check: a quoted one, or a bracketed one of kbsim's own headers or a core
/// module; "" otherwise. (Plain string handling: <regex> trips GCC 12's false warnings under the sanitizers.)
std::string include_target(const std::string& line) {
  std::size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return "";
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string::npos || line.compare(i, 7, "include") != 0) return "";
  i = line.find_first_not_of(" \t", i + 7);
  if (i == std::string::npos) return "";
  const char close = line[i] == '"' ? '"' : line[i] == '<' ? '>' : '\0';
  const std::size_t end = close ? line.find(close, i + 1) : std::string::npos;
  if (end == std::string::npos) return "";
  std::string target = line.substr(i + 1, end - i - 1);
  if (close == '>') {
    static const char* const kOwn[] = {"kbsim/",     "sim/",   "fabric/", "plugin/", "topology/", "cluster/",
                                       "component/", "split/", "report/", "run/",    "cli/",      "testing/"};
    bool own = false;
    for (const char* p : kOwn) own = own || target.rfind(p, 0) == 0;
    if (!own) return "";
  }
  return target;
}

std::vector<Include> includes_of(const fs::path& root, const fs::path& file) {
  std::vector<Include> out;
  std::ifstream in(file);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (std::string target = include_target(line); !target.empty())
      out.push_back({fs::relative(file, root).string(), n, std::move(target)});
  }
  return out;
}

std::string kit_of_header(const std::string& target) {  // "kbsim/pe/x.hpp" -> "pe"; "kbsim/x.hpp" -> ""
  std::string rest = target.substr(6);
  auto slash = rest.find('/');
  return slash == std::string::npos ? "" : rest.substr(0, slash);
}

/// Every include that breaks the rules, as "file:line: includes X (why)".
std::vector<std::string> violations(const std::vector<Include>& all) {
  std::vector<std::string> out;
  auto bad = [&](const Include& i, const std::string& why) {
    out.push_back(i.file + ":" + std::to_string(i.line) + ": includes \"" + i.target + "\" (" + why + ")");
  };
  for (const Include& i : all) {
    const bool sdk_target = i.target.rfind("kbsim/", 0) == 0;
    if (i.file.rfind("core/", 0) == 0) {
      std::string module = i.file.substr(5, i.file.find('/', 5) - 5);
      if (sdk_target) {
        if (!kCoreKits.count(kit_of_header(i.target))) bad(i, "the core sees no model kit");
        continue;
      }
      std::string to = i.target.substr(0, i.target.find('/'));
      if (!kCoreModules.count(module)) {
        bad(i, "core/" + module + " is not a known module");
      } else if (to != module && !kCoreModules.at(module).count(to)) {
        bad(i, "core/" + module + " may not depend on core/" + to);
      }
    } else if (i.file.rfind("sdk/include/kbsim/", 0) == 0) {
      std::string kit = kit_of_header("kbsim/" + i.file.substr(18));
      if (!sdk_target) {
        bad(i, "SDK headers include only SDK headers");
      } else {
        std::string to = kit_of_header(i.target);
        if (to != kit && !kKits.at(kit).count(to))
          bad(i, (kit.empty() ? std::string("the base SDK") : "kit " + kit) + " may not include kit " +
                     (to.empty() ? "base" : to));
      }
    } else if (i.file.rfind("plugins/", 0) == 0) {
      const bool test = i.file.find("_test.cpp") != std::string::npos || i.file.find("test_") != std::string::npos;
      if (!sdk_target && !test && i.target.find('/') != std::string::npos)
        bad(i, "a plugin sees only SDK headers and its own folder");
    }
  }
  return out;
}

std::vector<Include> scan(const fs::path& root) {
  std::vector<Include> all;
  for (const char* dir : {"core", "sdk/include", "plugins"})
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      auto ext = e.path().extension();
      if (e.is_regular_file() && (ext == ".cpp" || ext == ".hpp"))
        for (auto& i : includes_of(root, e.path())) all.push_back(std::move(i));
    }
  return all;
}

TEST(Layering, EveryIncludeFollowsTheLayers) {
  std::vector<Include> all = scan(KBSIM_SOURCE_DIR);
  EXPECT_GT(all.size(), 200u);
  EXPECT_THAT(violations(all), ::testing::IsEmpty());
}

TEST(Layering, UpwardIncludesAndCyclesAreCaught) {
  const std::vector<Include> planted = {
      {"core/sim/engine.cpp", 3, "component/simulation.hpp"},                // runs back up
      {"core/plugin/registry.cpp", 4, "topology/topology.hpp"},              // would close topology <-> plugin
      {"core/component/simulation.cpp", 5, "kbsim/pe/memory_store.hpp"},     // model vocabulary in the core
      {"sdk/include/kbsim/component.hpp", 6, "kbsim/tl/tl.hpp"},             // the base SDK pulling in a kit
      {"sdk/include/kbsim/tl/tl.hpp", 7, "kbsim/pe/command.hpp"},            // a kit including one above it
      {"plugins/builtin/pe_dma/pe_dma.cpp", 8, "component/simulation.hpp"},  // a plugin reaching into the core
      {"core/run/bench_runner.cpp", 9, "component/simulation.hpp"},          // allowed
      {"plugins/builtin/pe_dma/pe_dma.cpp", 10, "kbsim/pe/command.hpp"},     // allowed
  };
  EXPECT_EQ(violations(planted).size(), 6u);
}

}  // namespace
}  // namespace kbsim
