// The component-under-test harness: test one component in isolation, as its
// plugin builds it, against neighbours the test controls (GoogleMock ones,
// typically). The harness elaborates a small system with the real engine:
// the component under test plus one neighbour per link you declare, each
// connected both ways. A neighbour sends what you inject at the times you
// choose, and reports what it receives, with the exact arrival time.
//
//   #include "kbsim/testing_mock.hpp"  // kbsim/testing.hpp plus testkit::MockNeighbour (GoogleMock)
//
//   TEST(MySwitch, ForwardsAfterItsOverhead) {
//     kbsim::testkit::Harness h({.plugin_dirs = {"build"}});
//     h.component_type("my_switch", "my_switch", {{"overhead_ns", 3.0}});  // library, type, parameters
//     kbsim::testkit::MockNeighbour a, b;
//     h.neighbour("a", "link", a, {.bandwidth_gbs = 64, .latency_ns = 1});
//     h.neighbour("b", "link", b, {.bandwidth_gbs = 64, .latency_ns = 1});
//     h.build();
//     EXPECT_CALL(b, received(kbsim::ns_to_ticks(14), ::testing::_));
//     h.inject(0, "a", kbsim::testkit::packet(1024), "b");  // at t = 0, a sends 1 KiB towards b
//     h.run();
//   }
//
// Link with the kbsim::testing CMake target (find_package(kbsim) provides it;
// kbsim_add_plugin(... TESTS ...) links it for you).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kbsim/bench.hpp"
#include "kbsim/component.hpp"
#include "kbsim/message.hpp"
#include "kbsim/metrics.hpp"
#include "kbsim/params.hpp"
#include "kbsim/plugin.hpp"
#include "kbsim/time.hpp"

namespace kbsim::config {  // the config kit (kbsim/config/yaml.hpp, frontend.hpp), for a front-end's tests
class YamlSource;
class Origins;
class Components;
}  // namespace kbsim::config

namespace kbsim::testkit {

/// A neighbour of the component under test, as the test sees it.
class Neighbour {
 public:
  virtual ~Neighbour() = default;
  /// A whole message from the component under test arrived at sim time `at` (ps).
  virtual void received(Tick at, Message& msg) = 0;
};

/// A plain message for tests: a payload of `bytes` and nothing else.
struct Packet final : Message {
  static constexpr std::string_view kName = "testkit.Packet";
  static constexpr TypeId kType = type_id(kName);
  Packet() : Message(kType) {}
};
inline Ref<Packet> packet(std::uint64_t bytes) {
  auto p = make_message<Packet>();
  p->bytes = bytes;
  return p;
}

/// One direction of a link between a neighbour and the component under test.
struct Link {
  double bandwidth_gbs = 0.0;  ///< 0 = unlimited
  double latency_ns = 0.0;
  std::uint32_t flit_bytes = 256;
};

struct Options {
  /// Plugin directories to load (in order), before the installed kbsim's own.
  std::vector<std::filesystem::path> plugin_dirs;
  /// components.yaml files mapping implementation names, after the installed kbsim's.
  std::vector<std::filesystem::path> components_files;
  /// Also load the installed (or built) kbsim's plugins and components.yaml.
  bool kbsim_plugins = true;
  /// The node id of the component under test (some components expect an id of a given form).
  std::string id = "dut";
};

class Harness {
 public:
  explicit Harness(Options options = {});
  ~Harness();
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  /// The component under test by implementation name (components.yaml), with parameters.
  void component(const std::string& impl, const std::vector<std::pair<std::string, ParamValue>>& params = {});
  /// The component under test by the library that provides it (file name without lib/.so) and its type.
  void component_type(const std::string& library, const std::string& type,
                      const std::vector<std::pair<std::string, ParamValue>>& params = {});
  /// A component type made in this process rather than loaded (a block written in Python, tested from pytest):
  /// component_type(library, type.info.type, ...) then makes the component under test of it.
  void add_component_type(ComponentType type, const std::string& library);
  /// A neighbour `id` joined to the component under test by links of kind `kind`, one each way.
  void neighbour(const std::string& id, const std::string& kind, Neighbour& n, Link to_component = {},
                 Link from_component = {});
  /// Elaborate: construct every component and call setup(). Configuration errors are thrown here.
  void build();

  /// At sim time `at` (ps, not before now), neighbour `from` sends `msg` to the component under
  /// test. With `to` (another neighbour's id), msg->route is set to the path from `from` to `to`,
  /// which transit components follow.
  void inject(Tick at, std::string_view from, Ref<Message> msg, std::string_view to = {});
  /// Process events up to `until` (all of them by default).
  void run(Tick until = kNever);
  Tick now() const noexcept;

  /// The component under test (cast it to reach its own interface).
  Component& component_under_test();
  /// A statistic of the component under test.
  const Stat& stat(std::string_view name) const;
  /// The whole system, for anything else (routes, other statistics, services).
  System& system();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A bench to run in-process (Plugins::run_bench), as `kbsim run` takes it. (Every member has an initializer, so
/// a designated initializer may name only those it sets.)
struct BenchOptions {
  std::string bench{};                   ///< its name
  std::vector<std::string> params{};     ///< "key=value", as --param takes them
  std::filesystem::path topology{};      ///< as --topology; empty for a bench that reads no topology
  std::vector<std::string> overrides{};  ///< "dotted.path=value", as --set takes them
  unsigned jobs = 1;                     ///< worker processes for its sweep points (0: one per core)
};

/// What a bench run in-process left: what `kbsim run` would write and print of it.
struct BenchResult {
  Metrics metrics;                 ///< results.json's `metrics`
  std::vector<std::string> notes;  ///< the lines it noted (BenchContext::note), in order
  std::size_t systems = 0;         ///< the systems it built (configured(), BenchContext::build)
};

/// How Plugins::build builds a system.
struct BuildOptions {
  /// Log the system's data operations and keep every record, as a run does when an observer keeps records (the
  /// data pass of --verify-data): System::op_log() is then the log (nullptr otherwise), to read its records or to
  /// attach what reads them (a DataPass service, an observer's attach(system, log); no observer's on_record is
  /// called). The log lives as long as the system.
  bool op_log = false;
};

/// The plugins a test runs with, loaded as the kbsim command loads them (Options: plugin directories, components
/// files, kbsim's own), plus what the test registers in-process (add): it reads topologies with their front-ends and
/// builds systems of them, as a bench would, or runs a whole bench. The systems it builds must not outlive it.
///
///   kbsim::testkit::Plugins plugins;
///   auto sys = plugins.build(plugins.load_topology("topology.yaml", {"system.sips.count=2"}));
///   sys->run();
///   auto logged = plugins.build(plugins.load_topology("topology.yaml"), {.op_log = true});  // logged->op_log()
///   EXPECT_EQ(plugins.run_bench({.bench = "my-bench", .params = {"count=2"}}).notes.size(), 1u);
class Plugins {
 public:
  explicit Plugins(const Options& options = {});
  ~Plugins();
  Plugins(const Plugins&) = delete;
  Plugins& operator=(const Plugins&) = delete;

  /// Register what `plugin` provides as if a library named `library` had been loaded (fill it as a KBSIM_PLUGIN
  /// body does: add_kernel(plugin, ...), add_component<T>(plugin), ...). A component type gets the implementation
  /// name `<library>.<type>`.
  void add(PluginDescriptor plugin, const std::string& library = "test");
  /// A topology file with --set style overrides, as `kbsim run --topology FILE --set ...` reads it; ConfigError
  /// naming file:line:column.
  Graph load_topology(const std::filesystem::path& file, const std::vector<std::string>& overrides = {}) const;
  /// The same from YAML text; `name` stands for the file in messages.
  Graph parse_topology(const std::string& yaml, const std::string& name = "test.yaml",
                       const std::vector<std::string>& overrides = {}) const;
  /// A system of `graph`: every component built and set up (ConfigError for a bad graph); with `options.op_log`,
  /// its op log on and keeping records.
  std::unique_ptr<System> build(const Graph& graph, const BuildOptions& options = {}) const;
  /// The loaded components as a topology front-end's compile() gets them (kbsim/config/frontend.hpp), to call a
  /// front-end's own compiler from its tests. Valid while this object lives.
  const config::Components& components() const;
  /// Run a bench to completion in this process, with these plugins, as `kbsim run` runs it (without writing its
  /// folder). Its error is thrown as kbsim's runner throws it: BenchError with its reason, ConfigError, SimError,
  /// UsageError (an unknown bench, a bad parameter), PluginError.
  BenchResult run_bench(const BenchOptions& options) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Apply --set style overrides ("dotted.path=value") to a YAML document as kbsim applies them to a topology file
/// before a front-end reads it: `origins` names each replaced node "--set dotted.path=value", so errors name the
/// override. ConfigError for a malformed override. (The config kit's types: link kbsim::config.)
void apply_overrides(config::YamlSource& doc, config::Origins& origins, const std::vector<std::string>& overrides);

/// The kbsim command this harness belongs to: the build tree's or the installed one beside this library (the
/// KBSIM_BIN environment variable, when set, names another). kbsim/testing_cli.hpp runs it.
std::filesystem::path kbsim_binary();

}  // namespace kbsim::testkit
