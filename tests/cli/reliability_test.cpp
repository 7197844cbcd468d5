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
#include "kbsim/host_memory.hpp"

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace kbsim {
namespace {

std::string plugin_dir(const std::string& name) { return (fs::path(KBSIM_TEST_PLUGIN_DIR) / name).string(); }

/// `kbsim ARGS` fails with `code` and exactly this one line on stderr ("kbsim: error: " + line).
void expect_error(const std::string& args, int code, const std::string& line) {
  auto r = test::run_kbsim(args);
  EXPECT_EQ(r.code, code) << args << ": " << r.err;
  EXPECT_EQ(r.err, "kbsim: error: " + line + "\n") << args;
}

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

TEST(Reliability, AFatalSignalInAComponentNamesIt) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "under AddressSanitizer the sanitizer reports fatal signals itself";
#else
  auto r = throw_at("timer", "segv");
  EXPECT_EQ(r.code, 7) << r.err;
  EXPECT_EQ(r.err,
            "kbsim: error: CRASH: SIGSEGV (invalid memory access) in component bomb (test.thrower, library "
            "test_thrower) at t=5.000 ns\n");
  // In its constructor, setup() or finish() too: not just "in bench traffic".
  for (const auto& [stage, at] : {std::pair{"construct", "0.000"}, {"setup", "0.000"}, {"finish", "5.000"}}) {
    auto s = throw_at(stage, "segv");
    EXPECT_EQ(s.code, 7) << stage << ": " << s.err;
    EXPECT_EQ(s.err, std::string("kbsim: error: CRASH: SIGSEGV (invalid memory access) in component bomb "
                                 "(test.thrower, library test_thrower) at t=") +
                         at + " ns\n")
        << stage;
  }
#endif
}

TEST(Reliability, AFatalSignalWhileAPluginLibraryLoadsNamesTheLibrary) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "under AddressSanitizer the sanitizer reports fatal signals itself";
#else
  const std::string library = plugin_dir("crash_on_load") + "/libtest_crash_on_load.so";
  for (const char* where : {"static", "entry"}) {  // a static initializer, then the entry point
    auto r = test::run_kbsim_with(std::string("KBSIM_TEST_CRASH_IN=") + where,
                                  "list --plugins " + plugin_dir("crash_on_load"));
    EXPECT_EQ(r.code, 7) << where << ": " << r.err;
    EXPECT_EQ(r.err, "kbsim: error: CRASH: SIGSEGV (invalid memory access) in plugin library " + library +
                         " while it was loaded (its static initializers or entry point)\n")
        << where;
    EXPECT_EQ(r.out, "") << where;
  }
#endif
}

TEST(Reliability, APayloadTypeMismatchNamesBothTypesAndTheSender) {
  auto dir = test::temp_dir() / "picky";
  fs::create_directories(dir);
  test::write_file(dir / "c.yaml", "components:\n  test.picky: { library: test_thrower, type: picky }\n");
  test::write_file(dir / "t.yaml",
                   "nodes:\n  - { id: host, impl: builtin.endpoint, params: { send_to: reader } }\n"
                   "  - { id: reader, impl: test.picky }\n"
                   "edges:\n  - { src: host, dst: reader, bandwidth_gbs: 64, latency_ns: 1 }\n");
  auto r = test::run_kbsim("run --bench system --plugins " + plugin_dir("thrower") + " --components " +
                           (dir / "c.yaml").string() + " --topology " + (dir / "t.yaml").string() + " --out " +
                           (dir / "out").string());
  EXPECT_EQ(r.code, 5) << r.err;
  EXPECT_THAT(r.err,
              HasSubstr("reader: message type mismatch: expected test.Picky, got endpoint.Packet (sent by host)"));
}

TEST(Reliability, ADirectoryWhereAFileIsExpectedAndASymlinkLoopAreOneLineErrors) {
  auto topo = test::run_kbsim("topology --topology " + test::temp_dir().string());
  EXPECT_EQ(topo.code, 3) << topo.err;
  EXPECT_THAT(topo.err, HasSubstr(test::temp_dir().string() + ": is a directory, not a file"));
  auto dir = test::temp_dir() / "loop";
  fs::create_directories(dir);
  fs::create_symlink("libloop.so", dir / "libloop.so");  // a link to itself
  auto list = test::run_kbsim("list --plugins " + dir.string());
  EXPECT_EQ(list.code, 4) << list.err;
  EXPECT_THAT(list.err, HasSubstr("libloop.so: cannot load library: Too many levels of symbolic links"));
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

TEST(Reliability, AWiringErrorCausedByAComponentsEntryNamesTheEntry) {
  // builtin.switch mapped to a mesh node: its parameters and its ports are a mesh node's, and the error says which
  // line of which components file chose that type.
  auto dir = test::temp_dir() / "mapped";
  fs::create_directories(dir);
  const fs::path components = dir / "c.yaml";
  test::write_file(components, "components:\n  builtin.switch: { library: kbsim_mesh_node, type: mesh_node }\n");
  const std::string mapped = " (builtin.switch is component type 'mesh_node' of library kbsim_mesh_node, as " +
                             components.string() + ":2:3 maps it)\n";
  auto params =
      test::run_kbsim(kTwoSwitch + " --components " + components.string() + " --out " + (dir / "out").string());
  EXPECT_EQ(params.code, 3) << params.err;
  EXPECT_THAT(params.err, HasSubstr("unknown parameter 'overhead_ns' for builtin.switch"));
  EXPECT_THAT(params.err, testing::EndsWith(mapped));
  auto ports = test::run_kbsim(kTwoSwitch + " --components " + components.string() +
                               " --set nodes.sw0.params={} --set nodes.sw1.params={} --out " + (dir / "out").string());
  EXPECT_EQ(ports.code, 3) << ports.err;
  EXPECT_THAT(ports.err, HasSubstr("sw0 has no 'link' port"));
  EXPECT_THAT(ports.err, testing::EndsWith(mapped));
  EXPECT_EQ(std::count(ports.err.begin(), ports.err.end(), '\n'), 1) << ports.err;
}

TEST(Reliability, AnAhbmValueOrBlockFromSetIsNamedAsTheUserTypedIt) {
  // Values the topology front-end turns into generated links, and a block swapped into the PE template: the error
  // starts with the --set that did it (not the generated topology), numbers as written.
  const std::string run = "run --bench pe-dma-perf --out " + (test::temp_dir() / "ahbm-set").string() + " --set ";
  expect_error(run + "sip.links.ucie.bw_gbs=1e-300", 3,
               "--set sip.links.ucie.bw_gbs=1e-300: sip.links.ucie.bw_gbs: 1e-300 is too small to simulate (0 means "
               "unlimited; otherwise at least 1e-6)");
  expect_error(run + "sip.links.ucie.distance_mm=1e300", 3,
               "--set sip.links.ucie.distance_mm=1e300: sip.links.ucie.distance_mm: must be a number between 0 and "
               "1e6, got 1e300");
  auto block = test::run_kbsim(run + "cube.pe_template.components.pe_dma.impl=builtin.hbm_ctrl");
  EXPECT_EQ(block.code, 3) << block.err;
  EXPECT_THAT(block.err, StartsWith("kbsim: error: --set cube.pe_template.components.pe_dma.impl=builtin.hbm_ctrl: "
                                    "builtin.hbm_ctrl does not fit here: sip0.cube0.pe0.pe_dma has no 'pe_to_router' "
                                    "port (closest: hbm_to_router), which its edge to sip0.cube0.r0c0 needs (made by "
                                    "the topology front-end from "));
  EXPECT_THAT(block.err, HasSubstr("(builtin.hbm_ctrl is component type 'hbm_ctrl' of library kbsim_hbm_ctrl, as "));
  EXPECT_EQ(std::count(block.err.begin(), block.err.end(), '\n'), 1) << block.err;
  // A block with the right ports that cannot do the job (a forwarder as the DMA engine): named at its --set too.
  const std::string forwarder = "cube.pe_template.components.pe_dma.impl=builtin.forwarding";
  for (const std::string& cmd : {run + forwarder, "probe --set " + forwarder})
    expect_error(cmd, 3,
                 "--set " + forwarder +
                     ": sip0.cube0.pe0.pe_dma (builtin.forwarding) does not initiate memory requests, as a block in "
                     "its place must");
}

TEST(Reliability, AbsurdSizesAndTimesAreConfigurationErrorsNamingTheKey) {
  const std::string two = kTwoSwitch + " --out " + (test::temp_dir() / "absurd").string();
  // A value from --set is named as the user typed it, and its number as written: not at the position of what it
  // overrode, never as a 300-digit integer or 0.000000.
  expect_error(two + " --set 'edges.0.latency_ns=1e300'", 3,
               "--set edges.0.latency_ns=1e300: 'latency_ns' 1e300 is beyond the simulatable range (at most 1e15 ns)");
  expect_error(two + " --set 'edges.0.bandwidth_gbs=1e-300'", 3,
               "--set edges.0.bandwidth_gbs=1e-300: 'bandwidth_gbs' 1e-300 is too small to simulate (0 means "
               "unlimited; otherwise at least 1e-6)");
  expect_error(two + " --set 'edges.1.distance_mm=1e20'", 3,
               "--set edges.1.distance_mm=1e20: 'distance_mm' 1e20 is longer than a wire can be (at most 1e6 mm)");
  // Not at the distance it multiplies:
  expect_error(two + " --set 'defaults.ns_per_mm=1e300'", 3,
               "--set defaults.ns_per_mm=1e300: 'ns_per_mm' 1e300 is slower than a wire can be (at most 1000 ns per "
               "mm)");
  auto swapped = test::run_kbsim(two + " --set nodes.sw0.impl=builtin.hbm_ctrl");  // the --set, not the file's edge
  EXPECT_EQ(swapped.code, 3) << swapped.err;
  EXPECT_THAT(swapped.err, StartsWith("kbsim: error: --set nodes.sw0.impl=builtin.hbm_ctrl: builtin.hbm_ctrl does not "
                                      "fit here: sw0 has no 'link' port (known: router_to_hbm, hbm_to_router), which "
                                      "its edge from host needs ("));
  auto overhead = test::run_kbsim(two + " --set nodes.sw0.params.overhead_ns=1e300");
  EXPECT_EQ(overhead.code, 3) << overhead.err;
  EXPECT_THAT(overhead.err, HasSubstr("--set nodes.sw0.params.overhead_ns=1e300: parameter 'overhead_ns' of "
                                      "builtin.switch = 1e300 ns is beyond"));
  auto flits = test::run_kbsim(two + " --set nodes.host.params.send_bytes=1099511627776");  // 2^40 B: 2^32 flits
  EXPECT_EQ(flits.code, 5) << flits.err;
  EXPECT_THAT(flits.err, HasSubstr("more flits of 256 bytes than a message may have"));
  auto nowhere = test::run_kbsim(two + " --set nodes.host.params.send_to=nowhere");
  EXPECT_EQ(nowhere.code, 3) << nowhere.err;
  EXPECT_THAT(nowhere.err, HasSubstr("parameter 'send_to' of host (builtin.endpoint) names unknown node 'nowhere'"));
  auto itself = test::run_kbsim(two + " --set nodes.host.params.send_to=host");
  EXPECT_EQ(itself.code, 3) << itself.err;
  EXPECT_THAT(itself.err, HasSubstr("parameter 'send_to' names this endpoint itself"));
}

TEST(Reliability, ARunTooLargeForTheMachineIsRefusedWithAnEstimate) {
  if (available_memory_bytes() == 0 || available_memory_bytes() > 30e9)
    GTEST_SKIP() << "this machine could hold the runs; the test needs one with less than 30 GB available";
  auto mesh = test::run_kbsim("run --bench message-mesh --param x=4096 --param y=4096 --out " +
                              (test::temp_dir() / "mesh_huge").string());
  EXPECT_EQ(mesh.code, 3) << mesh.err;
  EXPECT_THAT(mesh.err, HasSubstr("message-mesh 4096x4096 (16777216 nodes) needs about 50.3 GB of memory; this "
                                  "machine has "));
  auto gemm = test::run_kbsim("run --bench gemm-single-pe --param M=50000 --param K=50000 --param N=64 --out " +
                              (test::temp_dir() / "gemm_huge").string());
  EXPECT_EQ(gemm.code, 3) << gemm.err;
  EXPECT_THAT(gemm.err, HasSubstr("50000x50000x64 GEMM operands needs about 30.1 GB of memory"));
}

TEST(Reliability, TheTopologyCommandCatchesWhatARunWould) {
  const std::string topo = "topology --topology " KBSIM_SOURCE_DIR
                           "/examples/topologies/two_switch.yaml --set nodes.host.params.send_to=host";
  auto r = test::run_kbsim(topo);
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("names this endpoint itself"));
}

TEST(Reliability, AnImplementationNameGivenTwiceInOneFileIsAnError) {
  auto dir = test::temp_dir() / "dup_impl";
  fs::create_directories(dir);
  test::write_file(dir / "c.yaml",
                   "components:\n  my.sw: { library: kbsim_forwarding, type: forwarding }\n"
                   "  my.sw: { library: kbsim_forwarding, type: forwarding }\n");
  auto r = test::run_kbsim("list --components " + (dir / "c.yaml").string());
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("c.yaml:3:3: implementation 'my.sw' is given twice (first at "));
}

TEST(Reliability, HostileTextNeverReachesATerminalOrBreaksAFile) {
  auto dir = test::temp_dir() / "hostile";
  fs::create_directories(dir);
  // An escape sequence in a node id: refused, naming the byte, and nothing raw printed.
  test::write_file(dir / "esc.yaml", "nodes:\n  - { id: \"a\\e[31mb\", impl: builtin.endpoint }\n");
  auto esc = test::run_kbsim("topology --topology " + (dir / "esc.yaml").string());
  EXPECT_EQ(esc.code, 3) << esc.err;
  EXPECT_THAT(esc.err, HasSubstr("node id 'a?[31mb' has the byte 0x1b at position 1"));
  EXPECT_EQ(esc.err.find('\x1b'), std::string::npos);
  // A newline in a user string: the error stays one line.
  test::write_file(dir / "nl.yaml", "nodes:\n  - { id: a, impl: \"x\\ny\" }\n");
  auto nl = test::run_kbsim("topology --topology " + (dir / "nl.yaml").string());
  EXPECT_EQ(nl.code, 3) << nl.err;
  EXPECT_THAT(nl.err, HasSubstr("unknown implementation 'x\\ny'"));
  EXPECT_EQ(std::count(nl.err.begin(), nl.err.end(), '\n'), 1) << nl.err;
  // A file name that is not UTF-8 ends up in results.json, which stays valid JSON.
  const fs::path odd = dir / "t\xff.yaml";
  fs::copy_file(KBSIM_SOURCE_DIR "/examples/topologies/two_switch.yaml", odd);
  auto run = test::run_kbsim("run --bench traffic --topology '" + odd.string() + "' --out " + (dir / "out").string());
  ASSERT_EQ(run.code, 0) << run.err;
  rapidjson::Document d;
  d.Parse<rapidjson::kParseValidateEncodingFlag>(test::read_file(dir / "out" / "results.json").c_str());
  EXPECT_FALSE(d.HasParseError());
  EXPECT_THAT(std::string(d["topology"]["source"].GetString()), HasSubstr("t\xEF\xBF\xBD.yaml"));
}

// A run of hours (10^12 ns of message-mesh), stopped from outside: the results so
// far are written, valid, marked interrupted, with the sim time reached.
const std::string kLongMesh = "run --bench message-mesh --param x=16 --param y=16 --param stop_ns=1000000000000";

void expect_interrupted_results(const fs::path& out) {
  rapidjson::Document d;
  d.Parse(test::read_file(out / "results.json").c_str());
  ASSERT_FALSE(d.HasParseError());
  EXPECT_TRUE(d["interrupted"].GetBool());
  EXPECT_GT(d["sim_time_ns"].GetDouble(), 0.0);
  EXPECT_LT(d["sim_time_ns"].GetDouble(), 1e12);
  EXPECT_GT(d["events"].GetUint64(), 0u);
}

TEST(Reliability, AWallTimeBudgetStopsTheRunAndKeepsItsResults) {
  auto out = test::temp_dir() / "max_wall";
  auto r = test::run_kbsim(kLongMesh + " --max-wall 0.5 --out " + out.string());
  EXPECT_EQ(r.code, 8) << r.err;
  EXPECT_THAT(r.err, HasSubstr("kbsim: error: INTERRUPTED: bench message-mesh stopped by --max-wall at sim time "));
  expect_interrupted_results(out);
}

// A bench waiting on the host runtime (a kernel launch) is stopped too, not left spinning.
TEST(Reliability, AWallTimeBudgetStopsAHostRuntimeBench) {
  auto out = test::temp_dir() / "max_wall_gemm";
  auto r = test::run_kbsim(
      "run --bench matmul-composite --param M=4096 --param K=4096 --param N=4096 --max-wall 0.3 "
      "--out " +
      out.string());
  EXPECT_EQ(r.code, 8) << r.err;
  EXPECT_THAT(r.err, HasSubstr("stopped by --max-wall"));
  rapidjson::Document d;
  d.Parse(test::read_file(out / "results.json").c_str());
  ASSERT_FALSE(d.HasParseError());
  EXPECT_TRUE(d["interrupted"].GetBool());
}

TEST(Reliability, CtrlCStopsTheRunAndKeepsItsResults) {
  auto dir = test::temp_dir() / "sigint";
  fs::create_directories(dir);
  const std::string script = std::string(KBSIM_BIN) + " " + kLongMesh + " --out " + (dir / "out").string() +
                             " --max-wall 120 >/dev/null 2>" + (dir / "err").string() +
                             " & pid=$!; sleep 3; kill -INT $pid; wait $pid; "
                             "echo $? > " +
                             (dir / "code").string();
  ASSERT_EQ(std::system(("bash -c '" + script + "'").c_str()), 0);
  EXPECT_EQ(test::read_file(dir / "code"), "8\n") << test::read_file(dir / "err");
  EXPECT_THAT(test::read_file(dir / "err"), HasSubstr("stopped by SIGINT"));
  expect_interrupted_results(dir / "out");
}

}  // namespace
}  // namespace kbsim
