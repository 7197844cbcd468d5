// sweep: run the points a file lists, each a registered bench with its
// parameters and --set overrides, through the run's point runner (`-j N`
// worker processes, or mpirun's ranks), and write them to points.json. It is
// what `kbsim.sweep` in Python runs, and a sweep from the shell:
//
//   points:                                   # YAML, or the same as JSON
//     - bench: matmul-composite
//       params: { M: 512, K: 512, N: 512 }
//       set: { system.sips.count: 1 }         # optional, as --set (a section's too: ccl.algorithm)
//     - bench: ccl-allreduce
//       params: { n_elem: 4096 }
//
// A point that fails does not stop the others: its error is its entry of
// points.json, and the run ends with POINTS_FAILED (exit 6) once all are done.
#include <string>
#include <vector>

#include "kbsim/config/yaml.hpp"
#include "kbsim/plugin.hpp"

namespace {

constexpr kbsim::StringParam kPoints{"points", "", "the file listing the points (YAML or JSON; see the bench's source)",
                                     true};

/// "key=value" of each entry of a map of scalars (`what` names it for errors).
std::vector<std::string> assignments(const kbsim::config::YamlSource& src, const YAML::Node& map,
                                     const std::string& what) {
  std::vector<std::string> out;
  if (!map) return out;
  if (!map.IsMap()) throw kbsim::ConfigError(src.where(map) + ": " + what + " must be a map of key: value");
  for (const auto& kv : map) {
    if (!kv.second.IsScalar())
      throw kbsim::ConfigError(src.where(kv.second) + ": " + what + " '" + kv.first.Scalar() + "' must be a scalar");
    out.push_back(kv.first.Scalar() + "=" + kv.second.Scalar());
  }
  return out;
}

std::vector<kbsim::SweepPoint> read_points(const std::string& file) {
  const kbsim::config::YamlSource src = kbsim::config::YamlSource::load(file);
  auto where = [&](const YAML::Node& n) { return src.where(n); };
  const YAML::Node& root = src.root();
  if (!root.IsMap()) throw kbsim::ConfigError(src.where(root) + ": expected a map with key 'points'");
  kbsim::config::check_keys(root, {"points"}, "a points file", where);
  const YAML::Node& list = root["points"];
  if (!list || !list.IsSequence() || list.size() == 0)
    throw kbsim::ConfigError(src.where(list ? list : root) + ": 'points' must be a non-empty list");
  std::vector<kbsim::SweepPoint> points;
  for (const YAML::Node& p : list) {
    if (!p.IsMap()) throw kbsim::ConfigError(src.where(p) + ": a point must be a map with key 'bench'");
    kbsim::config::check_keys(p, {"bench", "params", "set"}, "a point", where);
    if (!p["bench"] || !p["bench"].IsScalar())
      throw kbsim::ConfigError(src.where(p) + ": a point needs 'bench', a bench name");
    points.push_back({p["bench"].Scalar(), assignments(src, p["params"], "params"), assignments(src, p["set"], "set")});
  }
  return points;
}

class Sweep final : public kbsim::Bench {
 public:
  static kbsim::BenchInfo info() {
    kbsim::BenchInfo i{"sweep",
                       "runs the points a file lists (bench, params, set), in parallel as the run is told (-j N, "
                       "mpirun), into points.json",
                       {kPoints}};
    i.reads_topology = true;  // its points run on the run's topology
    return i;
  }

  void run(kbsim::BenchContext& ctx) override {
    const std::vector<kbsim::SweepPoint> points = read_points(ctx.params().get(kPoints));
    const std::vector<kbsim::PointResult> results = ctx.run_points(points);
    std::int64_t failed = 0;
    for (const kbsim::PointResult& r : results) failed += r.ok ? 0 : 1;
    ctx.metrics().set("points", static_cast<std::int64_t>(results.size()));
    ctx.metrics().set("failed", failed);
    ctx.note(std::to_string(results.size()) + " points, " + std::to_string(failed) + " failed (points.json)");
  }
};

}  // namespace

KBSIM_PLUGIN("bench_sweep") { kbsim::add_bench<Sweep>(plugin); }
