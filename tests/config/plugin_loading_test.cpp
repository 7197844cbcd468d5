// Plugin discovery and every loading error, with deliberately broken libraries.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace kbsim {
namespace {

std::string test_plugin(const std::string& name) { return std::string(KBSIM_TEST_PLUGIN_DIR) + "/" + name; }

TEST(PluginLoading, EveryBuiltPluginLoadsAndRegistersSomething) {
  std::string list = test::read_file(KBSIM_BUILT_PLUGINS_FILE);
  std::istringstream lines(list);
  std::string path;
  int count = 0;
  while (std::getline(lines, path)) {
    if (path.empty()) continue;
    core::Registry reg;
    ASSERT_NO_THROW(reg.load_library(path)) << path;
    std::size_t provided = reg.components().size() + reg.benches().size() + reg.sections().size() +
                           reg.commands().size() + reg.observers().size() + reg.services().size() +
                           reg.frontends().size() + reg.extensions().size();
    EXPECT_GT(provided, 0u) << path << " registers nothing";
    ++count;
  }
  EXPECT_GE(count, 6);
}

TEST(PluginLoading, DefaultComponentsFileResolvesEveryName) {
  auto reg = test::builtin_registry();
  for (const auto& [impl, entry] : reg->impls()) EXPECT_NO_THROW(reg->component_for_impl(impl, "test")) << impl;
  EXPECT_TRUE(reg->benches().count("message-mesh"));
  EXPECT_TRUE(reg->benches().count("traffic"));
}

TEST(PluginLoading, LibraryWithoutEntryPointIsRefused) {
  core::Registry reg;
  reg.add_search_dir(test_plugin("bad_no_entry"), true);
  try {
    reg.discover();
    FAIL() << "expected a PluginError";
  } catch (const PluginError& e) {
    EXPECT_THAT(e.what(), HasSubstr("libtest_bad_no_entry.so: not a kbsim plugin (no 'kbsim_plugin' entry point)"));
  }
}

TEST(PluginLoading, LibraryOfAnotherAbiIsRefusedNamingBothVersions) {
  core::Registry reg;
  try {
    reg.load_library(test_plugin("bad_abi") + "/libtest_bad_abi.so");
    FAIL() << "expected a PluginError";
  } catch (const PluginError& e) {
    EXPECT_THAT(e.what(), HasSubstr("built for kbsim ABI 999, this kbsim has ABI " + std::to_string(kAbiVersion)));
  }
}

TEST(PluginLoading, DuplicateTypeNameIsRefusedNamingTheFirstProvider) {
  core::Registry reg;
  reg.add_search_dir(KBSIM_PLUGIN_DIR, true);
  reg.add_search_dir(test_plugin("dup_type"), true);
  try {
    reg.discover();
    FAIL() << "expected a PluginError";
  } catch (const PluginError& e) {
    EXPECT_THAT(e.what(), HasSubstr("component type 'forwarding' is already provided by"));
    EXPECT_THAT(e.what(), HasSubstr("libkbsim_forwarding.so"));
  }
}

TEST(PluginLoading, ABenchNameThatIsNotKebabCaseIsRefused) {
  core::Registry reg;
  reg.add_search_dir(test_plugin("bad_bench_name"), true);
  try {
    reg.discover();
    (void)reg.benches();  // (registered when its library loads)
    FAIL() << "expected a PluginError";
  } catch (const PluginError& e) {
    EXPECT_THAT(e.what(), HasSubstr("libtest_bad_bench_name.so: bench name 'My_Bench' must be kebab-case"));
  }
}

TEST(PluginLoading, ABenchWithABlankSummaryIsRefused) {
  core::Registry reg;
  BenchType blank;
  blank.info = {"blank-summary", " \t", {}};
  try {
    reg.add_bench_type(blank, "libvendor.so");
    FAIL() << "expected a PluginError";
  } catch (const PluginError& e) {
    EXPECT_STREQ(e.what(),
                 "libvendor.so: bench 'blank-summary' has no summary (BenchInfo::summary, shown by kbsim list)");
  }
}

TEST(PluginLoading, MissingLibraryNamesWhereItLooked) {
  auto dir = test::temp_dir();
  test::write_file(dir / "c.yaml", "components:\n  vendor.x: { library: vendor_x, type: x }\n");
  core::Registry reg;
  reg.add_search_dir(KBSIM_PLUGIN_DIR, true);
  reg.discover();
  try {
    reg.load_components_file(dir / "c.yaml");
    FAIL() << "expected a PluginError";
  } catch (const PluginError& e) {
    EXPECT_THAT(e.what(), StartsWith((dir / "c.yaml").string() + ":2:3: vendor.x: library 'vendor_x' not found"));
    EXPECT_THAT(e.what(), HasSubstr("looked in: "));
    EXPECT_THAT(e.what(), HasSubstr("/plugins"));
  }
}

TEST(PluginLoading, MissingPluginDirectoryIsAnError) {
  core::Registry reg;
  EXPECT_THROW(reg.add_search_dir("/nonexistent/kbsim/plugins", true), PluginError);
  EXPECT_NO_THROW(reg.add_search_dir("/nonexistent/kbsim/plugins", false));
}

TEST(PluginLoading, UnknownImplementationSuggestsTheClosestNames) {
  auto reg = test::builtin_registry();
  try {
    reg->component_for_impl("builtin.forwardng", "topology.yaml:3:5");
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), StartsWith("topology.yaml:3:5: unknown implementation 'builtin.forwardng'"));
    EXPECT_THAT(e.what(), HasSubstr("closest: builtin.forwarding"));
  }
}

TEST(PluginLoading, FirstLibraryOfAFileNameWinsSoADirectoryCanShadowAnother) {
  core::Registry reg;
  reg.add_search_dir(test_plugin("swap_b"), true);
  reg.add_search_dir(test_plugin("swap_a"), true);
  reg.discover();
  ASSERT_EQ(reg.components().count("test_delay"), 1u);
  EXPECT_THAT(reg.components().at("test_delay").from.path, HasSubstr("swap_b"));
}

}  // namespace
}  // namespace kbsim
