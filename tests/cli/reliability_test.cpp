// Faulty plugins are contained and named (docs/architecture.md, "Plugins:
// discovery and errors"): a throw of any kind from any stage of a component, a
// library with an unresolved symbol, a truncated library.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "harness.hpp"

namespace fs = std::filesystem;
using ::testing::HasSubstr;

namespace kbsim {
namespace {

std::string plugin_dir(const std::string& name) { return (fs::path(KBSIM_TEST_PLUGIN_DIR) / name).string(); }

/// A run of one test.thrower node (and a mem endpoint, so a bench has a system).
test::CliResult throw_at(const std::string& stage, const std::string& what) {
  auto dir = test::temp_dir() / ("thrower_" + stage + "_" + what);
  fs::create_directories(dir);
  test::write_file(dir / "c.yaml", "components:\n  test.thrower: { library: test_thrower, type: thrower }\n");
  test::write_file(dir / "t.yaml", "nodes:\n  - { id: bomb, impl: test.thrower, params: { stage: " + stage +
                                       ", what: " + what + " } }\n");
  return test::run_kbsim("run --bench traffic --plugins " + plugin_dir("thrower") + " --components " +
                         (dir / "c.yaml").string() + " --topology " + (dir / "t.yaml").string() + " --out " +
                         (dir / "out").string());
}

TEST(Reliability, AThrowFromAnyStageNamesTheComponentItsLibraryAndTheTime) {
  for (const char* what : {"std", "int"}) {
    struct Stage {
      const char *name, *reported, *at;
    } const stages[] = {
        {"construct", "construction", "t=0 ns"}, {"setup", "setup", "t=0 ns"}, {"finish", "finish", "t=5 ns"}};
    for (const Stage& s : stages) {
      auto r = throw_at(s.name, what);
      EXPECT_EQ(r.code, 4) << s.name << " " << what << ": " << r.err;
      EXPECT_THAT(r.err, HasSubstr(std::string(s.at) + ": bomb (test.thrower, library test_thrower): " + s.reported +
                                   " failed: "));
      EXPECT_THAT(r.err, HasSubstr(what == std::string("int") ? "not a std::exception" : "thrown from"));
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
    }
    auto timer = throw_at("timer", what);
    EXPECT_EQ(timer.code, 5) << timer.err;
    EXPECT_THAT(timer.err, HasSubstr("t=5 ns: bomb: component fault (test.thrower, library test_thrower): "));
  }
}

TEST(Reliability, AnUnresolvedSymbolIsRefusedWhenTheLibraryLoads) {
  auto r = test::run_kbsim("list --plugins " + plugin_dir("bad_undefined"));
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_THAT(r.err, HasSubstr("libtest_bad_undefined.so: cannot load library"));
  EXPECT_THAT(r.err, HasSubstr("kbsim_test_nowhere_defined"));
}

TEST(Reliability, ATruncatedLibraryIsRefusedBeforeItIsLoaded) {
  auto dir = test::temp_dir() / "truncated";
  fs::create_directories(dir);
  const fs::path good = fs::path(KBSIM_PLUGIN_DIR) / "libkbsim_endpoint.so";
  const fs::path bad = dir / "libkbsim_truncated.so";
  fs::copy_file(good, bad, fs::copy_options::overwrite_existing);
  fs::resize_file(bad, fs::file_size(good) / 2);
  auto r = test::run_kbsim("list --plugins " + dir.string());
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_THAT(r.err, HasSubstr("libkbsim_truncated.so: cannot load library: truncated"));
  test::write_file(bad, std::string(200, 'x'));  // long enough for a header, but no ELF magic
  auto text = test::run_kbsim("list --plugins " + dir.string());
  EXPECT_EQ(text.code, 4);
  EXPECT_THAT(text.err, HasSubstr("cannot load library: not an ELF file"));
}

const std::string kTwoSwitch =
    "run --bench traffic --topology " KBSIM_SOURCE_DIR "/examples/topologies/two_switch.yaml";

TEST(Reliability, OutputsAreCheckedBeforeTheRunAndAFailedRunLeavesNothing) {
  auto dir = test::temp_dir() / "outputs";
  fs::create_directories(dir);
  test::write_file(dir / "a_file", "x");
  auto file_as_dir = test::run_kbsim(kTwoSwitch + " --out " + (dir / "a_file").string());
  EXPECT_EQ(file_as_dir.code, 2);
  EXPECT_THAT(file_as_dir.err, HasSubstr("--out " + (dir / "a_file").string() + ": exists and is not a directory"));
  const std::string mm = "run --bench matmul-composite --param K=64 --out " + (dir / "new" / "out").string();
  auto log_dir = test::run_kbsim(mm + " --op-log " + dir.string());
  EXPECT_EQ(log_dir.code, 2);
  EXPECT_THAT(log_dir.err, HasSubstr("--op-log " + dir.string() + ": is a directory"));
  auto no_folder = test::run_kbsim(mm + " --trace " + (dir / "missing" / "t.json").string());
  EXPECT_EQ(no_folder.code, 2);
  EXPECT_THAT(no_folder.err, HasSubstr("its folder " + (dir / "missing").string() + " does not exist"));
  // A run that fails after the check: the --out folders it made are gone again.
  auto failed = test::run_kbsim("run --bench pe-dma-perf --param op=copy --out " + (dir / "new" / "out").string());
  EXPECT_EQ(failed.code, 3);
  EXPECT_FALSE(fs::exists(dir / "new"));
}

TEST(Reliability, ConcurrentRunsIntoOneFolderDoNotTrampleEachOther) {
  auto dir = test::temp_dir() / "concurrent";
  fs::create_directories(dir);
  std::string script;
  for (int i = 0; i < 8; ++i)
    script += std::string(KBSIM_BIN) + " " + kTwoSwitch + " --out " + dir.string() + " >/dev/null 2>" +
              (dir / ("err" + std::to_string(i))).string() + " & ";
  script += "wait";
  ASSERT_EQ(std::system(("bash -c '" + script + "'").c_str()), 0);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(test::read_file(dir / ("err" + std::to_string(i))), "") << i;
  for (const char* f : {"results.json", "topology.json"}) {
    rapidjson::Document d;
    d.Parse(test::read_file(dir / f).c_str());
    EXPECT_FALSE(d.HasParseError()) << f;
  }
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << "left behind: " << e.path();
}

}  // namespace
}  // namespace kbsim
