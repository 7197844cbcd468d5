// Plugin files a loader takes (kbsim/plugin.hpp, PluginFileLoader): found at discovery in every plugin directory,
// helpers (_name) passed over, clashes refused as a library's are, and a file that fails to load named by its own
// error (or, for `kbsim list`, kept aside while the others load). The loader here is a test's, for "*.txt" files
// listing the benches they provide; the Python one is tested from python/tests/test_plugins.py.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "harness.hpp"

using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace kbsim {
namespace {

namespace fs = std::filesystem;

class Nothing final : public Bench {
 public:
  void run(BenchContext&) override {}
};

int g_loads = 0;

/// A "bench NAME" per line; "broken" throws as a loader does for a file it cannot run.
const PluginDescriptor* load_text(const fs::path& file) {
  ++g_loads;
  static std::deque<PluginDescriptor> kept;
  PluginDescriptor& d =
      kept.emplace_back(PluginDescriptor{kAbiVersion, KBSIM_BUILD_TAG, "text", {}, {}, {}, {}, {}, {}, {}, {}, {}});
  std::ifstream in(file);
  std::string word, name;
  while (in >> word) {
    if (word == "broken") throw PluginError(file.string() + ":1:1: cannot be read");
    in >> name;
    d.benches.push_back({BenchInfo{name, "from " + file.filename().string(), {}}, [] { return new Nothing(); }});
  }
  return &d;
}

const PluginFileLoader kText{&load_text};

void add_text_loader(core::Registry& reg) {
  reg.add_extension({std::string(PluginFileLoader::kKind), "txt", "test files",
                     std::shared_ptr<const void>(&kText, [](const void*) {})});
}

fs::path dir_with(const std::vector<std::pair<std::string, std::string>>& files) {
  const fs::path dir = test::temp_dir() / "files";
  fs::create_directories(dir);
  for (const auto& [name, text] : files) std::ofstream(dir / name) << text;
  return dir;
}

TEST(PluginFiles, EveryFileOfALoadersSuffixIsLoadedAndHelpersArePassedOver) {
  const fs::path dir = dir_with({{"a.txt", "bench alpha\nbench beta\n"},
                                 {"b.txt", "bench gamma\n"},
                                 {"_helper.txt", "bench hidden\n"},
                                 {"notes.md", "bench never\n"}});
  core::Registry reg;
  add_text_loader(reg);
  reg.add_search_dir(dir, true);
  reg.discover();
  std::vector<std::string> names;
  for (const auto& [name, entry] : reg.benches()) names.push_back(name + "@" + entry.from.library);
  EXPECT_THAT(names, ElementsAre("alpha@a.txt", "beta@a.txt", "gamma@b.txt"));
  EXPECT_EQ(reg.benches().at("gamma").from.path, (dir / "b.txt").string());
}

TEST(PluginFiles, AClashWithAnotherPluginIsRefusedNamingBoth) {
  const fs::path dir = dir_with({{"a.txt", "bench taken\n"}});
  core::Registry reg;
  add_text_loader(reg);
  reg.add_bench_type({BenchInfo{"taken", "a builtin", {}}, [] { return new Nothing(); }}, "builtin");
  reg.add_search_dir(dir, true);
  try {
    reg.discover();
    FAIL() << "expected a PluginError";
  } catch (const PluginError& e) {
    EXPECT_THAT(e.what(), HasSubstr("bench 'taken'"));
    EXPECT_THAT(e.what(), HasSubstr((dir / "a.txt").string()));
  }
}

TEST(PluginFiles, AFileThatFailsEndsDiscoveryUnlessTolerantThenTheOthersStillLoad) {
  const fs::path dir = dir_with({{"a.txt", "bench alpha\n"}, {"b.txt", "broken\n"}, {"c.txt", "bench gamma\n"}});
  {
    core::Registry reg;
    add_text_loader(reg);
    reg.add_search_dir(dir, true);
    EXPECT_THROW(
        {
          try {
            reg.discover();
          } catch (const PluginError& e) {
            EXPECT_EQ(std::string(e.what()), (dir / "b.txt").string() + ":1:1: cannot be read");
            throw;
          }
        },
        PluginError);
  }
  core::Registry reg;
  add_text_loader(reg);
  reg.set_tolerant(true);
  reg.add_search_dir(dir, true);
  reg.discover();
  EXPECT_EQ(reg.benches().size(), 2u);
  EXPECT_THAT(reg.broken(), ElementsAre((dir / "b.txt").string() + ":1:1: cannot be read"));
}

TEST(PluginFiles, WithoutALoaderForTheirSuffixFilesAreNotPlugins) {
  const fs::path dir = dir_with({{"a.txt", "broken\n"}});
  core::Registry reg;
  reg.add_search_dir(dir, true);
  g_loads = 0;
  EXPECT_NO_THROW(reg.discover());
  EXPECT_EQ(g_loads, 0);
  EXPECT_TRUE(reg.benches().empty());
}

}  // namespace
}  // namespace kbsim
