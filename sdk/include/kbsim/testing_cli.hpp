// Tests that run the kbsim command, as a user does: a bench, a plugin command,
// a sweep; and that read the errors a user sees (config_error). Header-only
// over GoogleTest, with the kbsim this SDK belongs to (testkit::kbsim_binary,
// kbsim/testing.hpp):
//
//   #include "kbsim/testing_cli.hpp"
//
//   TEST(MyBench, WritesItsLatency) {
//     const auto out = kbsim::testkit::temp_dir() / "out";
//     const kbsim::testkit::CliResult r =
//         kbsim::testkit::run_kbsim("run --bench my-bench --plugins build --out " + out.string());
//     ASSERT_EQ(r.code, 0) << r.err;
//     EXPECT_THAT(kbsim::testkit::read_file(out / "results.json"), ::testing::HasSubstr("latency_ns"));
//   }
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "kbsim/errors.hpp"
#include "kbsim/testing.hpp"

namespace kbsim::testkit {

/// A directory of this test's own (named after it, under the system temp dir), emptied at its first use in a test.
inline std::filesystem::path temp_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "kbsim";
  for (char& c : name)
    if (c == '/') c = '_';
  auto dir = std::filesystem::temp_directory_path() / ("kbsim-test-" + std::to_string(::getpid()) + "-" + name);
  static std::string prepared;  // wiped once per test, then shared by its calls
  if (prepared != dir.string()) {
    std::filesystem::remove_all(dir);
    prepared = dir.string();
  }
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p);
  out << text;
}

/// How a kbsim command ended: its exit code (128 + the signal if one killed it) and what it printed.
struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
};

/// Run `kbsim ARGS` through the shell, behind `launcher` if one is given (say "mpirun -np 2", with environment
/// assignments first), its input empty; stdout and stderr are captured.
inline CliResult run_kbsim_with(const std::string& launcher, const std::string& args) {
  static int calls = 0;
  const auto dir = temp_dir() / ("cli" + std::to_string(++calls));
  std::filesystem::create_directories(dir);
  const std::string cmd = launcher + (launcher.empty() ? "" : " ") + kbsim_binary().string() + " " + args + " >" +
                          (dir / "out").string() + " 2>" + (dir / "err").string() + " </dev/null";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(dir / "out");
  r.err = read_file(dir / "err");
  return r;
}
inline CliResult run_kbsim(const std::string& args) { return run_kbsim_with("", args); }

/// The message of the ConfigError `f` throws ("" and a test failure if it throws another error, or nothing).
///
///   EXPECT_EQ(config_error([&] { plugins.parse_topology("sips: 2\n", "t.yaml"); }), "t.yaml:1:1: unknown key ...");
template <class F>
std::string config_error(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a ConfigError, got: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected a ConfigError, nothing was thrown";
  return "";
}

}  // namespace kbsim::testkit
