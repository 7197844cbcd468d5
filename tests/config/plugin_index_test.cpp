// The plugin index: a run loads only the libraries it uses, a library changed
// since the index is loaded at discovery, a bad or foreign index is ignored,
// and clashes between indexed libraries are found before anything loads.
#include "plugin/plugin_index.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

namespace fs = std::filesystem;

/// A directory holding copies of a few built plugins, indexed.
fs::path indexed_copy(const std::vector<std::string>& libraries) {
  const fs::path dir = test::temp_dir() / "plugins";
  fs::create_directories(dir);
  for (const std::string& lib : libraries)
    fs::copy_file(fs::path(KBSIM_PLUGIN_DIR) / ("lib" + lib + ".so"), dir / ("lib" + lib + ".so"));
  core::index_plugin_directory(dir);
  return dir;
}

const std::vector<std::string> kMesh = {"kbsim_bench_message_mesh", "kbsim_mesh_node", "kbsim_forwarding",
                                        "kbsim_ccl_flat"};

TEST(PluginIndex, DiscoveryLoadsNothingAndEachLookupLoadsOnlyItsProvider) {
  const fs::path dir = indexed_copy(kMesh);
  core::Registry reg;
  reg.add_search_dir(dir, true);
  reg.discover();
  EXPECT_EQ(reg.loaded_libraries(), 0u);

  EXPECT_EQ(reg.bench("message-mesh").info.name, "message-mesh");
  EXPECT_EQ(reg.loaded_libraries(), 1u);

  reg.map_impl("mesh", "kbsim_mesh_node", "mesh_node", "test");  // from the index: nothing loads
  EXPECT_EQ(reg.loaded_libraries(), 1u);
  EXPECT_EQ(reg.component_for_impl("mesh", "test").info.type, "mesh_node");
  EXPECT_EQ(reg.loaded_libraries(), 2u);

  EXPECT_EQ(reg.extensions_of("ccl").size(), 2u);  // a whole list loads every provider of its kind (ring, direct)
  EXPECT_EQ(reg.loaded_libraries(), 3u);
  EXPECT_EQ(reg.libraries().size(), 4u);
}

TEST(PluginIndex, AWrongImplementationIsStillNamedFromTheIndex) {
  const fs::path dir = indexed_copy(kMesh);
  core::Registry reg;
  reg.add_search_dir(dir, true);
  reg.discover();
  try {
    reg.map_impl("mesh", "kbsim_mesh_node", "mesh_nod", "components.yaml:3:3");
    FAIL() << "expected a PluginError";
  } catch (const PluginError& e) {
    EXPECT_THAT(e.what(), HasSubstr("components.yaml:3:3: mesh: library 'kbsim_mesh_node' provides no component "
                                    "type 'mesh_nod'"));
    EXPECT_THAT(e.what(), HasSubstr("mesh_node"));
  }
  EXPECT_EQ(reg.loaded_libraries(), 0u);
}

TEST(PluginIndex, ALibraryChangedSinceTheIndexIsLoadedAtDiscovery) {
  const fs::path dir = indexed_copy(kMesh);
  const fs::path node = dir / "libkbsim_mesh_node.so";
  fs::last_write_time(node, fs::last_write_time(node) + std::chrono::seconds(1));
  core::Registry reg;
  reg.add_search_dir(dir, true);
  reg.discover();
  ASSERT_EQ(reg.loaded_libraries(), 1u);
  EXPECT_TRUE(reg.components().count("mesh_node"));
}

TEST(PluginIndex, AnIndexOfAnotherAbiOrMalformedIsIgnored) {
  const fs::path dir = indexed_copy(kMesh);
  const std::string text = test::read_file(dir / core::kPluginIndexFile);
  const std::string abi = "\t" + std::to_string(kAbiVersion) + "\n";
  const std::size_t at = text.find(abi);
  ASSERT_NE(at, std::string::npos);
  for (const std::string& bad : {text.substr(0, at) + "\t999\n" + text.substr(at + abi.size()),
                                 text + "library\tlibx.so\tmany\t1\n", text + "widget\tx\n", std::string("\n")}) {
    test::write_file(dir / core::kPluginIndexFile, bad);
    core::Registry reg;
    reg.add_search_dir(dir, true);
    reg.discover();
    EXPECT_EQ(reg.loaded_libraries(), kMesh.size()) << bad.substr(bad.size() > 40 ? bad.size() - 40 : 0);
  }
}

TEST(PluginIndex, AClashBetweenIndexedLibrariesIsFoundAtDiscovery) {
  const fs::path dir = indexed_copy({"kbsim_forwarding"});
  const fs::path other = test::temp_dir() / "dup";
  fs::create_directories(other);
  fs::copy_file(std::string(KBSIM_TEST_PLUGIN_DIR) + "/dup_type/libtest_dup_type.so", other / "libtest_dup_type.so");
  core::index_plugin_directory(other);
  core::Registry reg;
  reg.add_search_dir(dir, true);
  reg.add_search_dir(other, true);
  try {
    reg.discover();
    FAIL() << "expected a PluginError";
  } catch (const PluginError& e) {
    EXPECT_THAT(e.what(), HasSubstr("libtest_dup_type.so: component type 'forwarding' is already provided by"));
    EXPECT_THAT(e.what(), HasSubstr("libkbsim_forwarding.so"));
  }
  EXPECT_EQ(reg.loaded_libraries(), 0u);
}

TEST(PluginIndex, TheCommandWritesTheIndexAndRunsUseIt) {
  const fs::path dir = test::temp_dir() / "plugins";
  fs::create_directories(dir);
  for (const std::string& lib : kMesh)
    fs::copy_file(fs::path(KBSIM_PLUGIN_DIR) / ("lib" + lib + ".so"), dir / ("lib" + lib + ".so"));
  auto r = test::run_kbsim("list --write-index " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string index = test::read_file(dir / core::kPluginIndexFile);
  EXPECT_THAT(index, HasSubstr("library\tlibkbsim_mesh_node.so\t"));
  EXPECT_THAT(index, HasSubstr("\ncomponent\tmesh_node\n"));
  EXPECT_THAT(index, HasSubstr("\nbench\tmessage-mesh\n"));
  EXPECT_THAT(index, HasSubstr("\nmessage\t"));

  auto missing = test::run_kbsim("list --write-index " + (dir / "nowhere").string());
  EXPECT_EQ(missing.code, 4) << missing.err;
  EXPECT_THAT(missing.err, HasSubstr("plugin directory does not exist"));
}

}  // namespace
}  // namespace kbsim
