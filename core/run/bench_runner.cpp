#include "run/bench_runner.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>

#include "cluster/world.hpp"
#include "component/crash.hpp"
#include "component/op_log.hpp"
#include "kbsim/files.hpp"
#include "kbsim/text.hpp"
#include "plugin/params_resolve.hpp"
#include "plugin/registry.hpp"
#include "report/json.hpp"
#include "run/cluster_transport.hpp"
#include "sim/watch.hpp"
#include "topology/ccl_config.hpp"
#include "topology/topology.hpp"

namespace kbsim::core {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// `key=value` items; the value of a string parameter is taken as written ("--param sizes=512" is the text 512).
std::vector<RawParam> parse_params(const std::vector<std::string>& given, const std::vector<ParamSpec>& specs) {
  std::vector<RawParam> out;
  for (const auto& kv : given) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError("--param " + kv + ": expected key=value");
    const std::string key = kv.substr(0, eq), text = kv.substr(eq + 1);
    const bool text_param = std::any_of(
        specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == key && s.type == ParamType::kString; });
    out.push_back({key, text_param ? ParamValue{text} : parse_scalar(text), "--param " + kv});
  }
  return out;
}
}  // namespace

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

BenchRunner::BenchRunner(const Registry& registry, RunOptions options)
    : registry_(registry), options_(std::move(options)), type_(&registry.bench(options_.bench)) {
  params_ = resolve_params(type_->info.params, parse_params(options_.params, type_->info.params),
                           "bench " + options_.bench, "bench " + options_.bench);
  request_ = {options_.bench, options_.verify_data, options_.trace, options_.op_log};
  all_overrides_ = options_.overrides;
  ccl_overrides_ = take_ccl_overrides(options_.overrides);
  ccl_ = options_.ccl.empty() ? parse_ccl("", "(built-in CCL defaults)", ccl_overrides_, registry)
                              : load_ccl(options_.ccl, ccl_overrides_, registry);
  if (options_.topology_given && !type_->info.reads_topology) {
    const std::vector<std::string>& sets = options_.overrides;  // the topology's own
    const std::string what = sets.empty() ? "--topology " + options_.topology.string() : "--set " + sets.front();
    throw UsageError(what + ": bench " + options_.bench + " builds its own system and reads no topology (kbsim info " +
                     options_.bench + "); to run a topology as it is, use --bench system, or leave out --bench");
  }
  // Observers decide now whether they take part; a bad request (say, an
  // unwritable --trace path) fails before the run.
  for (const auto& [name, entry] : registry.observers())
    if (RunObserver* o = entry.type->create(request_)) observers_.emplace_back(o);
}

BenchRunner::~BenchRunner() = default;

const Graph& BenchRunner::loaded_topology() {
  if (!topology_)
    topology_ = std::make_shared<const Graph>(load_topology(options_.topology, options_.overrides, registry_));
  return *topology_;
}

const Graph& BenchRunner::topology() {
  require_reads_topology("topology()");
  return loaded_topology();
}

void BenchRunner::require_reads_topology(const char* call) const {
  if (type_->info.reads_topology) return;
  auto it = registry_.benches().find(options_.bench);
  const std::string library = it == registry_.benches().end() ? "?" : it->second.from.library;
  throw PluginError("bench '" + options_.bench + "' (library " + library + ") called BenchContext::" + call +
                    ", which runs on the configured topology, but its BenchInfo does not declare reads_topology");
}

System& BenchRunner::build_from(const Graph& graph, Graph* movable) {
  auto t0 = Clock::now();
  auto same = std::find_if(elaborated_.rbegin(), elaborated_.rend(),
                           [&](const Elaborated& e) { return e.graph.get() == &graph || *e.graph == graph; });
  if (same == elaborated_.rend()) {
    // The loaded topology (configured(), or a bench building ctx.topology()) is shared; any other graph is kept.
    std::shared_ptr<const Graph> kept;
    if (topology_.get() == &graph) {
      kept = topology_;
    } else if (movable) {
      kept = std::make_shared<const Graph>(std::move(*movable));
    } else {
      kept = std::make_shared<const Graph>(graph);
    }
    auto elaboration = elaborate(*kept, registry_);
    auto routes = RouteTable::for_elaboration(elaboration);
    elaborated_.push_back({std::move(kept), std::move(elaboration), std::move(routes), nullptr});
    same = elaborated_.rbegin();
  }
  const cluster::World& world = cluster::world();
  if (depth_ > 0 || world.size == 1 || options_.partition == "none") {
    systems_.push_back(std::make_unique<Simulation>(same->elaboration, registry_, same->routes));
  } else {  // under mpirun: this rank's part of the system
    check_splits();
    if (!same->partition)
      same->partition = std::make_shared<const Partition>(
          partition(*same->elaboration, world.size, partition_method(options_.partition)));
    if (!transport_) transport_ = std::make_unique<ClusterTransport>();
    const Split split{same->partition.get(), world.rank, transport_.get()};
    systems_.push_back(std::make_unique<Simulation>(same->elaboration, registry_, same->routes, &split));
  }
  graphs_.push_back(same->graph);
  build_wall_s_ += seconds_since(t0);
  return *systems_.back();
}

void BenchRunner::check_splits() const {
  // Every rank builds alike, so every rank refuses alike, before anything runs.
  const std::string whole = " (docs/scale-out.md); --partition none runs the whole system on every rank";
  if (!type_->info.splits)
    throw ConfigError("bench '" + type_->info.name + "' cannot run split over " +
                      std::to_string(cluster::world().size) +
                      " ranks: it drives components through their own interfaces, which only the rank running a "
                      "component sees" +
                      whole);
}

System& BenchRunner::configured() {
  require_reads_topology("configured()");
  if (!configured_) {
    build(loaded_topology());
    configured_ = systems_.back().get();
    // The op log runs only when something consumes it: an observer or a dump.
    bool keep = !options_.op_log.empty() || type_->info.reads_op_log;
    for (const auto& o : observers_) keep = keep || o->keeps_records();
    // A split system's ranks log alike, whether or not this one writes the trace or the op log (rank 0 does).
    if (keep || !observers_.empty() || (configured_->is_split() && options_.op_log_asked)) {
      op_log_ = std::make_unique<OpLog>(keep);
      for (const auto& o : observers_) op_log_->add_sink([obs = o.get()](const OpRecord& r) { obs->on_record(r); });
      configured_->set_op_log(op_log_.get());
      for (const auto& o : observers_) o->attach(*configured_, *op_log_);
    }
  }
  return *configured_;
}

void BenchRunner::run() {
  // A job whose systems were split ends on every rank together: a rank that ends with an error tells the others,
  // which end with it; one that ends without learns of another's.
  // Every rank of a bench whose systems may be split leaves through leave_split, whatever happens before they are.
  const cluster::World& world = cluster::world();
  if (depth_ == 0 && world.size > 1 && options_.partition != "none" && type_->info.splits && !transport_)
    transport_ = std::make_unique<ClusterTransport>();
  if (transport_) {
    run_together(*transport_, world.rank, world.size, [this] { run_here(); });
  } else {
    run_here();
  }
}

void BenchRunner::run_here() {
  std::unique_ptr<Bench> bench(type_->create());
  auto t0 = Clock::now();
  struct NamedBench {  // the crash handler names this bench while it runs, then the one before
    const char* outer = crash::bench();
    explicit NamedBench(const char* name) { crash::set_bench(name); }
    ~NamedBench() { crash::set_bench(outer); }
  } named(options_.bench.c_str());
  auto fault = [&](const std::string& what) {
    auto it = registry_.benches().find(options_.bench);
    const std::string library = it == registry_.benches().end() ? "?" : it->second.from.library;
    return PluginError("bench '" + options_.bench + "' (library " + library + ") failed: " + what);
  };
  try {
    bench->run(*this);
  } catch (const BenchError&) {
    // Stopped from outside, a bench may find its work unfinished: what it reached is the result.
    if (!watch::stop_requested()) throw;
  } catch (const Error&) {
    throw;  // a configuration or simulation error names itself
  } catch (const std::exception& e) {
    throw fault(e.what());  // a fault of the bench's own code is the plugin's, not kbsim's
  } catch (...) {
    throw fault("it threw something that is not a std::exception");
  }
  interrupted_ = watch::stop_requested();
  try {
    for (auto& s : systems_) s->finish_services();  // e.g. launches left outstanding still run to completion
  } catch (const BenchError& e) {                   // a service's complaint about the bench's use of it: name the bench
    if (!interrupted_) {
      std::string what = e.what();
      throw BenchError(e.reason(), "bench '" + options_.bench + "' " + what.substr(what.find(": ") + 2));
    }
  } catch (const SimError&) {
    if (!interrupted_) throw;  // work left unfinished by an interruption is expected
  }
  for (const auto& o : observers_) o->finish(*this);
  for (auto& s : systems_) s->finish();
  wall_s_ = seconds_since(t0);
  if (systems_.empty() && points_.empty())
    throw BenchError("NO_REQUESTS", "bench '" + options_.bench + "' built no system and submitted no work");
  // A sweep's points ran (and verified) their own systems; anything else must have run on the configured one.
  if ((options_.verify_data || !options_.trace.empty() || !options_.op_log.empty()) && !op_log_ &&
      (points_.empty() || !options_.trace.empty() || !options_.op_log.empty()))
    throw BenchError("NO_DATA_OPS", "bench '" + options_.bench +
                                        "' does not run on the configured system, so it has no data operations to " +
                                        (options_.verify_data ? "verify" : "log"));
}

RunOptions BenchRunner::nested_options(std::string bench, const std::vector<std::string>& params,
                                       const std::vector<std::string>& overrides) const {
  RunOptions o;
  o.bench = std::move(bench);
  o.params = params;
  o.topology = options_.topology;
  o.topology_given = options_.topology_given;
  o.ccl = options_.ccl;
  o.overrides = all_overrides_;  // this run's --set, then the nested run's own
  o.overrides.insert(o.overrides.end(), overrides.begin(), overrides.end());
  o.jobs = 1;
  return o;
}

const Metrics& BenchRunner::run_bench(std::string_view name, const std::vector<std::string>& params,
                                      const std::vector<std::string>& overrides) {
  const std::string who = "bench '" + options_.bench + "' ran bench '" + std::string(name) + "'";
  if (depth_ >= 4) throw BenchError("NESTING", who + " more than 4 levels deep (does a bench run itself?)");
  require_reads_topology("run_bench()");
  loaded_topology();  // the user's topology and --set errors are reported as such, before any nested run
  RunOptions o = nested_options(std::string(name), params, overrides);
  try {
    // Only what the caller reads is kept: the nested systems go when the run ends.
    BenchRunner runner(registry_, std::move(o));
    runner.depth_ = depth_ + 1;
    runner.run();
    build_wall_s_ += runner.build_wall_s();
    nested_sim_time_ += runner.sim_time();
    nested_events_ += runner.events();
    nested_metrics_.push_back(std::make_unique<Metrics>(std::move(runner.metrics_)));
  } catch (const BenchError& e) {
    std::string what = e.what();
    throw BenchError(e.reason(), who + ": " + what.substr(what.find(": ") + 2));
  } catch (const UsageError& e) {  // an unknown bench or a malformed parameter: the calling bench's mistake
    throw BenchError("NESTED_RUN", who + ": " + e.what());
  } catch (const ConfigError& e) {  // a parameter the nested bench refused (the topology loaded already)
    throw BenchError("NESTED_RUN", who + ": " + e.what());
  }
  return *nested_metrics_.back();
}

namespace {
Metrics::Scalar scalar_of(const ParamValue& v) {
  return std::visit([](const auto& x) { return Metrics::Scalar{x}; }, v);
}

Metrics copy(const Metrics& m) {
  Metrics out(m.is_list());
  for (const Metrics::Entry& e : m.entries()) {
    if (e.node) {
      Metrics& into = m.is_list() ? (e.node->is_list() ? out.append_list() : out.append())
                                  : (e.node->is_list() ? out.list(e.key) : out.object(e.key));
      into = copy(*e.node);
    } else if (m.is_list()) {
      out.append(e.scalar);
    } else {
      out.set(e.key, e.scalar);
    }
  }
  return out;
}

std::string point_name(std::size_t i, std::size_t n, const SweepPoint& p) {
  std::string s = "point " + std::to_string(i + 1) + " of " + std::to_string(n) + " (" + p.bench;
  for (const auto& kv : p.params) s += " " + kv;
  if (!p.overrides.empty()) {
    s += "; set";
    for (const auto& kv : p.overrides) s += " " + kv;
  }
  return s + ")";
}

/// "12/36 points, 4.1 s elapsed, about 8 s left", redrawn in place.
void show_progress(std::size_t done, std::size_t n, Clock::time_point t0, const char* whose) {
  const double el = seconds_since(t0);
  const double left = done ? el / static_cast<double>(done) * static_cast<double>(n - done) : 0.0;
  std::fprintf(stderr, "\r  sweep%s  %zu/%zu points  %.1f s elapsed  about %.0f s left   ", whose, done, n, el, left);
  if (done == n) std::fputc('\n', stderr);
  std::fflush(stderr);
}
}  // namespace

/// A file's text into a temporary name beside it (renamed into place with the rest).
static std::filesystem::path write_text_temp(const std::filesystem::path& file, const std::string& text) {
  const std::filesystem::path tmp = temp_name(file.string());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error(file.string() + ": cannot write (" + std::strerror(errno) + ")");
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw Error(file.string() + ": write failed");
  }
  return tmp;
}

PointRecord BenchRunner::run_point(const SweepPoint& p, const std::string& who) {
  PointRecord rec;
  rec.config.set("bench", p.bench);
  Metrics& given = rec.config.list("params");
  for (const auto& kv : p.params) given.append(kv);
  Metrics& set = rec.config.list("set");
  for (const auto& kv : p.overrides) set.append(kv);
  RunOptions o = nested_options(p.bench, p.params, p.overrides);
  o.verify_data = options_.verify_data;  // a sweep run with --verify-data checks every point
  try {
    BenchRunner runner(registry_, std::move(o));
    runner.depth_ = depth_ + 1;
    Metrics& resolved = rec.config.object("resolved");
    for (const ParamEntry& e : runner.params_.entries()) resolved.set(e.name, scalar_of(e.value));
    runner.run();
    rec.result.ok = true;
    rec.result.metrics = std::move(runner.metrics_);
    rec.sim_time = runner.sim_time();
    rec.events = runner.events();
    rec.build_wall_s = runner.build_wall_s();
  } catch (const std::exception& e) {
    rec.result.error = who + ": " + one_line(e.what());
  }
  return rec;
}

std::vector<PointResult> BenchRunner::run_points(const std::vector<SweepPoint>& points) {
  if (depth_ >= 4) throw BenchError("NESTING", "bench '" + options_.bench + "' ran sweeps more than 4 levels deep");
  require_reads_topology("run_points()");
  loaded_topology();  // the user's topology and --set errors are reported as such, before any point
  const std::size_t n = points.size();
  auto describe = [&](std::size_t i) { return point_name(i, n, points[i]); };
  // The top-level run spreads its points over the job's ranks; a nested one runs its own.
  const cluster::World w = depth_ == 0 ? cluster::world() : cluster::World{};
  unsigned jobs = options_.jobs;
  if (jobs == 0) jobs = w.size > 1 ? 1 : std::max(1u, std::thread::hardware_concurrency());
  const std::vector<std::size_t> mine = share_of(n, w.rank, w.size);
  const auto t0 = Clock::now();
  const char* whose = w.size > 1 ? " (rank 0's share)" : "";
  std::function<void(std::size_t, std::size_t)> progress;
  if (options_.progress && w.rank == 0 && depth_ == 0)
    progress = [&](std::size_t done, std::size_t total) { show_progress(done, total, t0, whose); };
  struct Sweeping {  // the per-run progress line keeps quiet while the sweep shows its own
    bool was = watch::sweeping();
    explicit Sweeping(bool on) { watch::set_sweeping(was || on); }
    ~Sweeping() { watch::set_sweeping(was); }
  } sweeping(static_cast<bool>(progress));
  std::vector<PointRecord> local = run_parallel(
      mine.size(), jobs, [&](std::size_t k) { return run_point(points[mine[k]], describe(mine[k])); },
      [&](std::size_t k) { return describe(mine[k]); }, progress);

  std::vector<PointRecord> all(n);
  if (w.size == 1) {
    all = std::move(local);
  } else {  // every rank sends its share and gets the others'
    std::string bytes;
    for (const PointRecord& r : local) {
      const std::string one = encode(r);
      const std::uint64_t len = one.size();
      bytes.append(reinterpret_cast<const char*>(&len), sizeof len);
      bytes += one;
    }
    const std::vector<std::string> gathered = cluster::all_gather(bytes);
    for (unsigned r = 0; r < w.size; ++r) {
      std::string_view from = gathered[r];
      for (std::size_t i : share_of(n, r, w.size)) {
        std::uint64_t len = 0;
        std::memcpy(&len, from.data(), sizeof len);
        all[i] = decode(from.substr(sizeof len, len));
        from.remove_prefix(sizeof len + len);
      }
    }
  }
  std::vector<PointResult> out;
  out.reserve(n);
  for (PointRecord& r : all) {
    nested_sim_time_ += r.sim_time;
    nested_events_ += r.events;
    build_wall_s_ += r.build_wall_s;
    PointRecord kept;  // points.json keeps the configuration and outcome; the bench gets the result
    kept.config = std::move(r.config);
    kept.result.ok = r.result.ok;
    kept.result.error = r.result.error;
    kept.result.metrics = copy(r.result.metrics);
    kept.sim_time = r.sim_time;
    kept.events = r.events;
    out.push_back(std::move(r.result));
    points_.push_back(std::move(kept));
  }
  return out;
}

std::size_t BenchRunner::failed_points() const noexcept {
  return static_cast<std::size_t>(
      std::count_if(points_.begin(), points_.end(), [](const PointRecord& r) { return !r.result.ok; }));
}

void BenchRunner::write_file(std::string_view name, std::string content) {
  const std::string n(name);
  if (n.empty() || n == "." || n == ".." || n.find('/') != std::string::npos || n == "results.json" ||
      n == "topology.json" || n == "points.json")
    throw BenchError("BAD_OUTPUT", "bench '" + options_.bench + "' asked to write '" + n +
                                       "': an output file is a plain file name other than results.json, "
                                       "topology.json and points.json");
  for (auto& f : files_)
    if (f.first == n) {
      f.second = std::move(content);
      return;
    }
  files_.emplace_back(n, std::move(content));
}

const Graph& BenchRunner::shown_graph() { return graphs_.empty() ? loaded_topology() : *graphs_.front(); }

Tick BenchRunner::sim_time() const {
  Tick t = 0;
  for (const auto& s : systems_) t += s->now();
  return t + nested_sim_time_;
}

std::uint64_t BenchRunner::events() const {
  std::uint64_t n = 0;
  for (const auto& s : systems_) n += s->events();
  return n + nested_events_;
}

void BenchRunner::write_split(JsonWriter& w) const {
  // How the systems were split over the ranks (host figures: they differ with the rank count, the results do not).
  w.begin_object();
  w.field("ranks", cluster::world().size);
  w.field("partition", options_.partition);
  w.key("systems");
  w.begin_array();
  for (const auto& sys : systems_) {
    const Partition* p = sys->split().partition;
    if (!p) continue;
    w.begin_object();
    w.field("summary", describe(*p));
    w.key("nodes_per_rank");
    w.begin_array();
    for (std::size_t n : p->nodes_per_rank) w.value(static_cast<std::uint64_t>(n));
    w.end_array();
    w.field("cut_links", p->cut_links);
    if (p->lookahead != kNever) w.field("lookahead_ns", ticks_to_ns(p->lookahead));
    w.field("windows", sys->windows());
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

void BenchRunner::write_results(const std::filesystem::path& dir) const {
  std::filesystem::create_directories(dir);
  const bool many = systems_.size() > 1;
  auto prefix = [&](std::size_t k) { return many ? "s" + std::to_string(k) + "/" : std::string(); };

  // Benches that build one graph many times (a fresh system per scenario) get it written once.
  auto same = [](const Graph& a, const Graph& b) {
    if (&a == &b) return true;  // systems of one elaboration share their graph
    if (a.nodes.size() != b.nodes.size() || a.edges.size() != b.edges.size() || a.source != b.source ||
        a.route_metric != b.route_metric)
      return false;
    for (std::size_t i = 0; i < a.nodes.size(); ++i) {
      const NodeSpec &x = a.nodes[i], &y = b.nodes[i];
      if (x.id != y.id || x.impl != y.impl || x.params.size() != y.params.size()) return false;
      for (std::size_t k = 0; k < x.params.size(); ++k)
        if (x.params[k].name != y.params[k].name || x.params[k].value != y.params[k].value) return false;
    }
    for (std::size_t i = 0; i < a.edges.size(); ++i) {
      const EdgeSpec &x = a.edges[i], &y = b.edges[i];
      if (x.src != y.src || x.dst != y.dst || x.bandwidth_gbs != y.bandwidth_gbs || x.latency_ns != y.latency_ns ||
          x.flit_bytes != y.flit_bytes || x.kind != y.kind || x.route_mm != y.route_mm)
        return false;
    }
    return true;
  };
  bool one_graph =
      std::all_of(graphs_.begin(), graphs_.end(), [&](const auto& g) { return same(*g, *graphs_.front()); });
  // Every file goes to a temporary name first; all are renamed into place only
  // when all of them (and the observers' own files) were written.
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> staged;  // temporary -> final
  try {
    staged.emplace_back(json::write_json_temp(dir / "topology.json",
                                              [&](JsonWriter& w) {
                                                if (one_graph) {
                                                  write_graph(w, graphs_.empty() ? *topology_ : *graphs_.front(),
                                                              registry_);
                                                  return;
                                                }
                                                w.begin_array();
                                                for (const auto& g : graphs_) write_graph(w, *g, registry_);
                                                w.end_array();
                                              }),
                        dir / "topology.json");

    staged.emplace_back(
        json::write_json_temp(dir / "results.json",
                              [&](JsonWriter& w) {
                                const double wall = wall_s_;
                                const std::uint64_t ev = events();
                                w.begin_object();
                                w.field("kbsim_version", KBSIM_VERSION);
                                w.field("abi_version", std::uint64_t{kAbiVersion});
                                w.field("bench", options_.bench);
                                w.field("interrupted", interrupted_);
                                w.key("params");
                                write_params(w, params_);

                                w.key("topology");
                                w.begin_object();
                                std::size_t nodes = 0, edges = 0;
                                for (const auto& g : graphs_) {
                                  nodes += g->nodes.size();
                                  edges += g->edges.size();
                                }
                                w.field("source", (graphs_.empty() ? *topology_ : *graphs_.front()).source);
                                w.field("systems", systems_.size());
                                w.field("nodes", nodes);
                                w.field("edges", edges);
                                w.key("overrides");
                                w.begin_array();
                                for (const auto& o : all_overrides_) w.value(o);
                                w.end_array();
                                w.field("file", "topology.json");
                                w.field("distinct_graphs", one_graph ? 1u : static_cast<unsigned>(graphs_.size()));
                                w.end_object();

                                if (ccl_used_) {  // the bench ran collectives: the configuration they ran with
                                  w.key("ccl");
                                  w.begin_object();
                                  w.field("file", ccl_.source);
                                  w.field("algorithm", ccl_.algorithm);
                                  w.key("params");
                                  w.begin_object();
                                  for (const ParamEntry& e : ccl_.of().entries()) {
                                    w.key(e.name);
                                    write_param_value(w, e.value);
                                  }
                                  w.end_object();
                                  w.end_object();
                                }

                                std::map<std::string, std::size_t> impl_count;
                                for (const auto& s : systems_)
                                  for (const auto& n : s->nodes()) ++impl_count[n.impl];
                                w.key("implementations");
                                w.begin_object();
                                for (const auto& [impl, count] : impl_count) {
                                  const auto& entry = registry_.impls().at(impl);
                                  w.key(impl);
                                  w.begin_object();
                                  w.field("type", entry.type);
                                  w.field("library", entry.library);
                                  w.field("nodes", count);
                                  w.end_object();
                                }
                                w.end_object();

                                w.field("sim_time_ns", ticks_to_ns(sim_time()));
                                w.field("events", ev);
                                w.field("wall_time_s", wall);
                                w.field("events_per_s", wall > 0 ? static_cast<double>(ev) / wall : 0.0);
                                w.key("host");
                                w.begin_object();
                                w.field("build_wall_s", build_wall_s_);
                                w.field("elaborations", elaborated_.size());  // distinct graphs elaborated
                                w.field("peak_rss_mb", peak_rss_mb());
                                if (std::any_of(systems_.begin(), systems_.end(),
                                                [](const auto& sys) { return sys->split().partition; })) {
                                  w.key("split");
                                  write_split(w);
                                }
                                w.end_object();

                                w.key("components");
                                w.begin_object();
                                for (std::size_t k = 0; k < systems_.size(); ++k) {
                                  const auto& nodes = systems_[k]->nodes();
                                  for (std::size_t ni = 0; ni < nodes.size(); ++ni) {
                                    const auto& n = nodes[ni];
                                    const auto stats = systems_[k]->node_stats(static_cast<NodeIndex>(ni));
                                    // Idle components (every statistic zero) are left out.
                                    if (std::all_of(stats.begin(), stats.end(),
                                                    [](const Stat& st) { return st.count == 0 && st.value == 0; }))
                                      continue;
                                    w.key(prefix(k) + n.id);
                                    w.begin_object();
                                    w.field("impl", n.impl);
                                    const auto& specs = n.type->info.stats;
                                    for (std::size_t i = 0; i < specs.size(); ++i) {
                                      if (specs[i].kind == StatKind::kCounter) {
                                        w.field(specs[i].name, stats[i].count);
                                      } else {
                                        w.field(specs[i].name, stats[i].value);
                                      }
                                    }
                                    w.end_object();
                                  }
                                }
                                w.end_object();

                                w.key("links");
                                w.begin_array();
                                for (std::size_t k = 0; k < systems_.size(); ++k) {
                                  const Simulation& s = *systems_[k];
                                  double span = ticks_to_ns(s.now());
                                  for (const auto& l : s.links()) {
                                    const Traffic u = s.use(l);
                                    if (u.bytes == 0) continue;  // control-only links carry no bytes and take no time
                                    w.begin_object();
                                    w.field("src", prefix(k) + s.nodes()[l.src].id);
                                    w.field("dst", prefix(k) + s.nodes()[l.dst].id);
                                    w.field("messages", u.messages);
                                    w.field("flits", u.flits);
                                    w.field("bytes", u.bytes);
                                    w.field("busy_ns", ticks_to_ns(u.busy));
                                    w.field("utilization", span > 0 ? ticks_to_ns(u.busy) / span : 0.0);
                                    w.end_object();
                                  }
                                }
                                w.end_array();

                                if (!points_.empty()) {
                                  w.key("points");
                                  w.begin_object();
                                  w.field("count", points_.size());
                                  w.field("failed", failed_points());
                                  w.field("file", "points.json");
                                  w.end_object();
                                }
                                if (op_log_) {
                                  w.key("op_log");
                                  w.begin_object();
                                  w.field("records", op_log_->count());
                                  w.field("open_at_end", op_log_->open());
                                  w.end_object();
                                }
                                Metrics sections;
                                for (const auto& o : observers_) o->write_results(sections);
                                write_metrics_fields(w, sections);

                                w.key("metrics");
                                write_metrics(w, metrics_);
                                w.end_object();
                              }),
        dir / "results.json");
    if (!points_.empty())
      staged.emplace_back(json::write_json_temp(dir / "points.json",
                                                [&](JsonWriter& w) {
                                                  w.begin_object();
                                                  w.field("bench", options_.bench);
                                                  w.key("points");
                                                  w.begin_array();
                                                  for (std::size_t i = 0; i < points_.size(); ++i) {
                                                    const PointRecord& r = points_[i];
                                                    w.begin_object();
                                                    w.field("index", i);
                                                    w.key("config");
                                                    write_metrics(w, r.config);
                                                    w.field("ok", r.result.ok);
                                                    if (!r.result.ok) w.field("error", r.result.error);
                                                    w.field("sim_time_ns", ticks_to_ns(r.sim_time));
                                                    w.field("events", r.events);
                                                    w.key("metrics");
                                                    write_metrics(w, r.result.metrics);
                                                    w.end_object();
                                                  }
                                                  w.end_array();
                                                  w.end_object();
                                                }),
                          dir / "points.json");
    for (const auto& [name, content] : files_) staged.emplace_back(write_text_temp(dir / name, content), dir / name);
    if (!options_.op_log.empty())
      staged.emplace_back(json::write_json_temp(options_.op_log, [&](JsonWriter& w) { write_op_log(w, *op_log_); }),
                          options_.op_log);
    for (const auto& o : observers_) o->commit();
  } catch (...) {
    std::error_code ec;
    for (const auto& [tmp, final] : staged) std::filesystem::remove(tmp, ec);
    throw;
  }
  for (std::size_t k = 0; k < staged.size(); ++k) {
    std::error_code ec;
    std::filesystem::rename(staged[k].first, staged[k].second, ec);
    if (ec) {  // remove what was not renamed yet
      const std::string why = staged[k].second.string() + ": cannot write (" + ec.message() + ")";
      for (std::size_t j = k; j < staged.size(); ++j) std::filesystem::remove(staged[j].first, ec);
      throw Error(why);
    }
  }
}

}  // namespace kbsim::core
