#include "run/bench_runner.hpp"

#include <algorithm>
#include <chrono>

#include "component/crash.hpp"
#include "component/op_log.hpp"
#include "kbsim/text.hpp"
#include "plugin/params_resolve.hpp"
#include "plugin/registry.hpp"
#include "report/results_writer.hpp"
#include "run/saved_points.hpp"
#include "sim/watch.hpp"
#include "split/job_placement.hpp"
#include "topology/section_config.hpp"
#include "topology/topology.hpp"

namespace kbsim::core {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
Metrics::Scalar scalar_of(const ParamValue& v) {
  return std::visit([](const auto& x) { return Metrics::Scalar{x}; }, v);
}
}  // namespace

BenchRunner::BenchRunner(const Registry& registry, RunOptions options, unsigned depth, std::shared_ptr<RunCache> cache)
    : registry_(registry),
      options_(std::move(options)),
      type_(&registry.bench(options_.bench)),
      depth_(depth),
      state_(registry, bench_placement(options_.partition, depth > 0, options_.bench, type_->info.splits),
             std::move(cache)) {
  params_ = resolve_params(type_->info.params, parse_param_args(options_.params, type_->info.params),
                           "bench " + options_.bench, "bench " + options_.bench);
  all_overrides_ = options_.overrides;
  read_sections();
  if (options_.topology_given && !type_->info.reads_topology) {
    const std::vector<std::string>& sets = options_.overrides;  // the topology's own
    const std::string what = sets.empty() ? "--topology " + options_.topology.string() : "--set " + sets.front();
    throw UsageError(what + ": bench " + options_.bench + " builds its own system and reads no topology (kbsim info " +
                     options_.bench + "); to run a topology as it is, use --bench system, or leave out --bench");
  }
  start_observers();
}

BenchRunner::~BenchRunner() = default;

void BenchRunner::read_sections() {
  for (const auto& [name, entry] : registry_.sections()) {
    auto file = options_.section_files.find(name);
    const SectionSource& src =
        section_sources_
            .emplace(name, SectionSource{entry.type,
                                         file == options_.section_files.end() ? std::filesystem::path() : file->second,
                                         take_section_overrides(options_.overrides, name)})
            .first->second;
    if (options_.sections_given.count(name) || !src.overrides.empty()) loaded_section(name, src);
  }
}

const Section& BenchRunner::loaded_section(const std::string& name, const SectionSource& src) const {
  auto it = sections_.find(name);
  if (it == sections_.end())
    it = sections_.emplace(name, load_section(*src.info, src.file, src.overrides, registry_)).first;
  return it->second;
}

void BenchRunner::start_observers() {
  std::vector<ParamSpec> declared;
  for (const auto& [name, entry] : registry_.observers())
    for (const RunFlag& f : entry.type->info.flags) declared.push_back(f.spec);
  request_ = {options_.bench, resolve_params(declared, options_.flags, "kbsim run", "kbsim run"),
              options_.writes_outputs};
  // Observers decide now whether they take part; a bad request (say, an unwritable --trace path) fails before the
  // run.
  for (const auto& [name, entry] : registry_.observers())
    if (RunObserver* o = entry.type->create(request_)) {
      observers_.emplace_back(o);
      observer_infos_.push_back(&entry.type->info);
    }
}

void BenchRunner::loaded_section_files() const {
  for (const auto& [name, src] : section_sources_)
    if (!src.file.empty()) loaded_section(name, src);
}

const Section& BenchRunner::section(std::string_view name) const {
  auto src = section_sources_.find(name);
  if (src == section_sources_.end()) {
    std::vector<std::string> names;
    for (const auto& [n, s] : section_sources_) names.push_back(n);
    throw ConfigError("bench '" + options_.bench + "' read the configuration section '" + std::string(name) +
                      "', which no loaded plugin declares" + suggest(std::string(name), names));
  }
  sections_read_.emplace(name);
  return loaded_section(src->first, src->second);
}

std::vector<std::string> BenchRunner::written() const {
  std::vector<std::string> out;
  for (const auto& o : observers_)
    if (std::string line = o->written(); !line.empty()) out.push_back(std::move(line));
  return out;
}

const Graph& BenchRunner::loaded_topology() {
  if (!topology_)
    topology_ = state_.cache()->topology(options_.topology, options_.overrides, [&] {
      return load_topology(options_.topology, options_.overrides, registry_);
    });
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

Simulation& BenchRunner::build_from(const Graph& graph, Graph* movable) {
  // The loaded topology (configured(), or a bench building ctx.topology()) is shared; any other graph is kept.
  return state_.build(graph, topology_.get() == &graph ? topology_ : nullptr, movable);
}

void BenchRunner::release(System& system) {
  const auto& systems = state_.systems();
  auto it = std::find_if(systems.begin(), systems.end(), [&](const auto& s) { return &s->system() == &system; });
  if (it == systems.end() || it->get() == configured_)
    throw BenchError("RELEASED", "bench '" + options_.bench + "' released " +
                                     (it == systems.end() ? "a system it did not build" : "configured()") +
                                     ": release() takes a system the bench built with build()");
  (*it)->system().release();
}

System& BenchRunner::configured() {
  require_reads_topology("configured()");
  if (!configured_) {
    configured_ = &build_from(loaded_topology(), nullptr);
    // The op log runs only when something consumes it: an observer or the bench. (Observers take part on every
    // process of a job alike, so that the parts of a system log alike.)
    bool keep = type_->info.reads_op_log;
    for (const auto& o : observers_) keep = keep || o->keeps_records();
    if (keep || !observers_.empty()) {
      op_log_ = std::make_unique<OpLog>(keep);
      for (const auto& o : observers_) op_log_->add_sink([obs = o.get()](const OpRecord& r) { obs->on_record(r); });
      configured_->set_op_log(op_log_.get());
      for (const auto& o : observers_) o->attach(configured_->system(), *op_log_);
    }
  }
  return configured_->system();
}

void BenchRunner::run() {
  // A bench whose systems may run in parts over a job's processes ends on every process together, however it ends
  // (its placement sees to it); any other runs here alone (a system it builds in parts refuses it).
  if (type_->info.splits) {
    state_.placement().together([this] { run_here(); });
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
    for (auto& s : state_.systems()) s->services().finish();  // e.g. launches left outstanding still run to completion
  } catch (const BenchError& e) {  // a service's complaint about the bench's use of it: name the bench
    if (!interrupted_) {
      std::string what = e.what();
      throw BenchError(e.reason(), "bench '" + options_.bench + "' " + what.substr(what.find(": ") + 2));
    }
  } catch (const SimError&) {
    if (!interrupted_) throw;  // work left unfinished by an interruption is expected
  }
  for (const auto& o : observers_) o->finish(*this);
  for (auto& s : state_.systems()) s->system().finish();
  wall_s_ = seconds_since(t0);
  if (!options_.replot.empty() && points_.empty())
    throw BenchError("NO_POINTS", "bench '" + options_.bench + "' runs no sweep points: --replot " +
                                      options_.replot.string() + " has nothing to draw from");
  if (state_.systems().empty() && points_.empty())
    throw BenchError("NO_REQUESTS", "bench '" + options_.bench + "' built no system and submitted no work");
  check_observed();
}

void BenchRunner::check_observed() const {
  if (op_log_) return;
  // A sweep's points ran (and were observed in) their own runs; anything else must have run on the configured system.
  std::string wanting;
  for (std::size_t k = 0; k < observers_.size(); ++k)
    if (points_.empty() || !observer_infos_[k]->observes_points)
      for (const RunFlag& f : observer_infos_[k]->flags) wanting += (wanting.empty() ? "--" : ", --") + f.spec.name;
  if (!wanting.empty())
    throw BenchError("NO_DATA_OPS", "bench '" + options_.bench +
                                        "' does not run on the configured system, so it has no data operations for " +
                                        wanting);
}

RunOptions BenchRunner::nested_options(std::string bench, const std::vector<std::string>& params,
                                       const std::vector<std::string>& overrides) const {
  RunOptions o;
  o.bench = std::move(bench);
  o.params = params;
  o.topology = options_.topology;
  o.topology_given = options_.topology_given;
  o.section_files = options_.section_files;
  o.sections_given = options_.sections_given;
  o.writes_outputs = options_.writes_outputs;
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
  loaded_section_files();
  RunOptions o = nested_options(std::string(name), params, overrides);
  try {
    // Only what the caller reads is kept: the nested systems go when the run ends.
    BenchRunner runner(registry_, std::move(o), depth_ + 1, state_.cache());
    runner.run();
    state_.add_nested(runner.sim_time(), runner.events(), runner.build_wall_s());
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

PointRecord BenchRunner::run_point(const SweepPoint& p, const std::string& who) {
  PointRecord rec;
  rec.config.set("bench", p.bench);
  Metrics& given = rec.config.list("params");
  for (const auto& kv : p.params) given.append(kv);
  Metrics& set = rec.config.list("set");
  for (const auto& kv : p.overrides) set.append(kv);
  RunOptions o = nested_options(p.bench, p.params, p.overrides);
  for (std::size_t k = 0; k < observer_infos_.size(); ++k)  // e.g. a sweep run with --verify-data checks every point
    if (observer_infos_[k]->observes_points)
      for (const RunFlag& f : observer_infos_[k]->flags)
        for (const RawParam& given : options_.flags)
          if (given.name == f.spec.name) o.flags.push_back(given);
  try {
    BenchRunner runner(registry_, std::move(o), depth_ + 1, state_.cache());
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
  loaded_section_files();
  SweepOptions o;
  o.jobs = options_.jobs;
  o.across_processes = depth_ == 0;  // the top-level run shares its points out over the job; a nested one runs its own
  o.progress = options_.progress && depth_ == 0;
  std::vector<PointRecord> all =
      depth_ == 0 && !options_.replot.empty()
          ? saved_points(options_.replot, options_.bench, all_overrides_, points)
          : sweep(points, o, [&](const SweepPoint& p, const std::string& who) { return run_point(p, who); });
  for (const PointRecord& r : all) state_.add_nested(r.sim_time, r.events, r.build_wall_s);
  return hand_over(std::move(all), points_);
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

const Graph& BenchRunner::shown_graph() { return graphs().empty() ? loaded_topology() : *graphs().front(); }

void BenchRunner::write_results(const std::filesystem::path& dir) const {
  RunRecord r;
  r.bench = options_.bench;
  r.params = &params_;
  r.interrupted = interrupted_;
  r.overrides = &all_overrides_;
  r.systems = &state_.systems();
  r.graphs = &state_.graphs();
  r.topology = topology_.get();
  r.elaborations = state_.elaborations();
  r.sim_time = sim_time();
  r.events = events();
  r.wall_s = wall_s_;
  r.build_wall_s = build_wall_s();
  for (const std::string& name : sections_read_) {  // the configuration the bench ran with
    const Section& s = sections_.find(name)->second;
    Metrics& c = r.config_sections.object(name);
    c.set("file", s.source);
    const Params* params = &s.defaults;
    if (!s.info->selector.empty()) {
      c.set(s.info->selector, s.selected);
      params = &s.entry().params;
    }
    Metrics& p = c.object("params");
    for (const ParamEntry& e : params->entries()) p.set(e.name, scalar_of(e.value));
  }
  r.observers = &observers_;
  r.op_log = op_log_.get();
  r.metrics = &metrics_;
  r.points = &points_;
  r.files = &files_;
  r.placement = &state_.placement();
  core::write_results(dir, r, registry_);
}

}  // namespace kbsim::core
