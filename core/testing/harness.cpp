// The component-under-test harness (kbsim/testing.hpp) on the real engine:
// a graph of the component under test and one in-process neighbour per
// declared link, elaborated by core::Simulation with the loaded plugins;
// and the loaded plugins themselves, for topologies, systems (with their op
// log, if asked) and benches (core::BenchRunner).
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>

#include "component/simulation.hpp"
#include "kbsim/config/frontend.hpp"
#include "kbsim/testing.hpp"
#include "plugin/registry.hpp"
#include "run/bench_runner.hpp"
#include "topology/topology.hpp"

namespace kbsim::testkit {

namespace fs = std::filesystem;

namespace {

constexpr const char* kNeighbourType = "kbsim_testkit_neighbour";
constexpr const char* kNeighbourImpl = "testkit.neighbour";
constexpr const char* kComponentImpl = "testkit.component_under_test";
constexpr std::uint64_t kInject = 1;

/// Where this library lives: the installed or built kbsim's plugins and components.yaml are near it.
fs::path own_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_dir), &info) == 0 || !info.dli_fname) return {};
  std::error_code ec;
  return fs::weakly_canonical(fs::path(info.dli_fname), ec).parent_path();
}

fs::path first_existing(const std::vector<fs::path>& candidates) {
  std::error_code ec;
  for (const auto& c : candidates)
    if (!c.empty() && fs::exists(c, ec)) return c;
  return {};
}

}  // namespace

fs::path kbsim_binary() {
  if (const char* env = std::getenv("KBSIM_BIN"); env && *env) return env;
  const fs::path here = own_dir();  // build/lib beside build/bin, or <prefix>/<libdir> with <prefix>/<bindir>
  if (fs::path p = first_existing({here / ".." / "bin" / "kbsim", here / KBSIM_LIB_TO_BIN / "kbsim"}); !p.empty())
    return fs::weakly_canonical(p);
  return "kbsim";  // on the PATH
}

namespace {

/// The neighbour component: hands what arrives to the test's Neighbour and sends what is injected.
class NeighbourNode final : public Component {
 public:
  explicit NeighbourNode(const ComponentContext& ctx, Neighbour* n) : Component(ctx), n_(n) {}
  static ComponentInfo info() {
    ComponentInfo i;
    i.type = kNeighbourType;
    i.summary = "a neighbour of the component under test, driven by a test (kbsim/testing.hpp)";
    i.ports = {{"*", "the link to and from the component under test"}};
    return i;
  }
  void on_message(PortIndex, Ref<Message> msg) override { n_->received(now(), *msg); }
  void on_timer(std::uint64_t, Ref<Message> msg) override { send(0, std::move(msg)); }

 private:
  Neighbour* n_;
};

/// The Neighbour of the node being constructed (set by Harness::build around elaboration).
thread_local std::vector<std::pair<std::string, Neighbour*>>* g_building = nullptr;

Component* make_neighbour(const ComponentContext& ctx) {
  for (const auto& [id, n] : *g_building)
    if (id == ctx.id) return new NeighbourNode(ctx, n);
  throw Error("testkit: no neighbour object for node '" + std::string(ctx.id) + "'");
}

std::vector<RawParam> raw(const std::vector<std::pair<std::string, ParamValue>>& params) {
  std::vector<RawParam> out;
  for (const auto& [k, v] : params) out.push_back({k, v, "testkit parameter '" + k + "'"});
  return out;
}

}  // namespace

struct Harness::Impl {
  Options options;
  core::Registry registry;
  Graph graph;
  bool has_component = false;
  std::vector<std::pair<std::string, Neighbour*>> neighbours;
  std::unique_ptr<core::Simulation> sim;

  core::Simulation& built() const {
    if (!sim) throw Error("testkit: call build() first");
    return *sim;
  }
  void check_not_built() const {
    if (sim) throw Error("testkit: the system is already built");
  }
};

namespace {
/// Load `reg` as the options say: the test's plugin directories, then kbsim's own, then the components files.
void load(core::Registry& reg, const Options& options) {
  for (const auto& d : options.plugin_dirs) reg.add_search_dir(d, true);
  fs::path components;
  if (options.kbsim_plugins) {
    // Installed: <prefix>/lib[/<multiarch>]/libkbsim_testing.so; built: <build>/lib/.
    const fs::path here = own_dir();
    if (fs::path p = first_existing({here / "kbsim" / "plugins", here / ".." / "kbsim" / "plugins",
                                     here / ".." / "lib" / "kbsim" / "plugins", here / ".." / "plugins"});
        !p.empty())
      reg.add_search_dir(p, false);
    components = first_existing({here / ".." / "share" / "kbsim" / "components.yaml",
                                 here / ".." / ".." / "share" / "kbsim" / "components.yaml",
                                 fs::path(KBSIM_SOURCE_DIR) / "components.yaml"});
  }
  reg.discover();
  if (!components.empty()) reg.load_components_file(components);
  for (const auto& f : options.components_files) reg.load_components_file(f);
}
}  // namespace

Harness::Harness(Options options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  core::Registry& reg = impl_->registry;
  load(reg, impl_->options);
  reg.add_component_type({NeighbourNode::info(), &make_neighbour}, "(testkit)");
  reg.map_impl(kNeighbourImpl, "(testkit)", kNeighbourType, "testkit");
  impl_->graph.source = "testkit";
}

Harness::~Harness() = default;

void Harness::component(const std::string& impl, const std::vector<std::pair<std::string, ParamValue>>& params) {
  impl_->check_not_built();
  if (impl_->has_component) throw Error("testkit: the component under test is already chosen");
  impl_->graph.nodes.push_back({impl_->options.id, impl, raw(params), "testkit component '" + impl + "'"});
  impl_->has_component = true;
}

void Harness::component_type(const std::string& library, const std::string& type,
                             const std::vector<std::pair<std::string, ParamValue>>& params) {
  impl_->check_not_built();
  impl_->registry.map_impl(kComponentImpl, library, type, "testkit component_type(" + library + ", " + type + ")");
  component(kComponentImpl, params);
}

void Harness::add_component_type(ComponentType type, const std::string& library) {
  impl_->check_not_built();
  impl_->registry.add_component_type(std::move(type), library);
}

void Harness::neighbour(const std::string& id, const std::string& kind, Neighbour& n, Link to_component,
                        Link from_component) {
  impl_->check_not_built();
  impl_->neighbours.emplace_back(id, &n);
  impl_->graph.nodes.push_back({id, kNeighbourImpl, {}, "testkit neighbour '" + id + "'"});
  const std::string& dut = impl_->options.id;
  impl_->graph.edges.push_back({id, dut, to_component.bandwidth_gbs, to_component.latency_ns, to_component.flit_bytes,
                                kind, "testkit link " + id + " -> " + dut});
  impl_->graph.edges.push_back({dut, id, from_component.bandwidth_gbs, from_component.latency_ns,
                                from_component.flit_bytes, kind, "testkit link " + dut + " -> " + id});
}

void Harness::build() {
  impl_->check_not_built();
  if (!impl_->has_component) throw Error("testkit: choose the component under test first");
  // The component under test comes first: node 0, ports in the order its neighbours were declared.
  std::stable_partition(impl_->graph.nodes.begin(), impl_->graph.nodes.end(),
                        [&](const NodeSpec& n) { return n.id == impl_->options.id; });
  g_building = &impl_->neighbours;
  try {
    impl_->sim = std::make_unique<core::Simulation>(core::elaborate(impl_->graph, impl_->registry), impl_->registry);
  } catch (...) {
    g_building = nullptr;
    throw;
  }
  g_building = nullptr;
}

void Harness::inject(Tick at, std::string_view from, Ref<Message> msg, std::string_view to) {
  core::Simulation& sim = impl_->built();
  if (at < sim.now()) throw Error("testkit: inject at a time in the past");
  const NodeIndex src = sim.find_node(from);
  if (sim.elaboration()->nodes[src].impl != kNeighbourImpl)
    throw Error("testkit: '" + std::string(from) + "' is not a neighbour");
  if (!to.empty()) msg->route = &sim.route(src, sim.find_node(to), 0);
  sim.schedule(src, at, kInject, std::move(msg), 128);
}

void Harness::run(Tick until) { impl_->built().system().run_until(until); }

Tick Harness::now() const noexcept { return impl_->sim ? impl_->sim->now() : 0; }

Component& Harness::component_under_test() { return impl_->built().component(NodeIndex{0}); }

const Stat& Harness::stat(std::string_view name) const { return impl_->built().system().stat(impl_->options.id, name); }

System& Harness::system() { return impl_->built().system(); }

namespace {

constexpr const char* kOpLogService = "kbsim_testkit_op_log";

/// The op log of a system Plugins::build made with BuildOptions::op_log, keeping every record. It is a service of
/// that system, made by the system's own board, so it lives exactly as long as the system (the simulation drops its
/// services after its components).
class KeptOpLog final : public Service {
 public:
  core::OpLog log{true};
};

Service* make_kept_op_log(System&, Simulator&) { return new KeptOpLog(); }

}  // namespace

struct Plugins::Impl {
  core::Registry registry;
  std::unique_ptr<config::Components> components;        ///< the registry, as front-ends see it
  std::vector<std::unique_ptr<PluginDescriptor>> added;  ///< kept: the registry refers to what they hold
};

Plugins::Plugins(const Options& options) : impl_(std::make_unique<Impl>()) {
  load(impl_->registry, options);
  impl_->registry.add_service_type(
      {{kOpLogService, "a system's op log, kept by the test kit (BuildOptions::op_log)"}, &make_kept_op_log},
      "(testkit)");
  impl_->components = core::components_of(impl_->registry);
}

Plugins::~Plugins() = default;

void Plugins::add(PluginDescriptor plugin, const std::string& library) {
  core::Registry& reg = impl_->registry;
  const PluginDescriptor& d = *impl_->added.emplace_back(std::make_unique<PluginDescriptor>(std::move(plugin)));
  for (const auto& c : d.components) {
    reg.add_component_type(c, library);
    reg.map_impl(library + "." + c.info.type, library, c.info.type, "testkit Plugins::add");
  }
  for (const auto& b : d.benches) reg.add_bench_type(b, library);
  for (const auto& e : d.extensions) reg.add_extension(e, library);
  for (const auto& v : d.services) reg.add_service_type(v, library);
  for (const auto& m : d.messages) reg.add_message_type(m, library);
  if (!d.sections.empty() || !d.frontends.empty() || !d.commands.empty() || !d.observers.empty())
    throw Error(
        "testkit: Plugins::add registers component types, benches, extensions, services and message "
        "types; load a library for the rest");
}

Graph Plugins::load_topology(const fs::path& file, const std::vector<std::string>& overrides) const {
  return core::load_topology(file, overrides, impl_->registry);
}

Graph Plugins::parse_topology(const std::string& yaml, const std::string& name,
                              const std::vector<std::string>& overrides) const {
  return core::parse_topology(yaml, name, overrides, impl_->registry);
}

std::unique_ptr<System> Plugins::build(const Graph& graph, const BuildOptions& options) const {
  std::unique_ptr<core::SimulatedSystem> sys = core::simulated(graph, impl_->registry);
  if (options.op_log)  // as BenchRunner::configured() turns it on for an observer that keeps records
    sys->simulation().set_op_log(&dynamic_cast<KeptOpLog&>(*sys->find_service(kOpLogService)).log);
  return sys;
}

const config::Components& Plugins::components() const { return *impl_->components; }

BenchResult Plugins::run_bench(const BenchOptions& options) const {
  core::RunOptions o;
  o.bench = options.bench;
  o.params = options.params;
  o.topology = options.topology;
  o.topology_given = !options.topology.empty();
  o.overrides = options.overrides;
  o.jobs = options.jobs;
  core::BenchRunner runner(impl_->registry, std::move(o));
  runner.run();
  return {std::move(runner.metrics()), runner.notes(), runner.systems().size()};
}

void apply_overrides(config::YamlSource& doc, config::Origins& origins, const std::vector<std::string>& overrides) {
  core::apply_overrides(doc, origins, overrides);
}

}  // namespace kbsim::testkit
