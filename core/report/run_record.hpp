// What a finished run hands to the results writer: its bench and parameters,
// the systems it built and their graphs, the sweep points it ran, what its
// observers and the run's own configuration add, and the files it wrote.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kbsim/bench.hpp"
#include "kbsim/graph.hpp"
#include "kbsim/metrics.hpp"
#include "kbsim/observer.hpp"
#include "kbsim/time.hpp"

namespace kbsim::core {

class Simulation;
class OpLog;
class Placement;

/// One sweep point as the run records it.
struct PointRecord {
  PointResult result;
  Metrics config;  ///< {bench, params (resolved), set}
  Tick sim_time = 0;
  std::uint64_t events = 0;
  double build_wall_s = 0.0;  ///< host time: not part of what must agree
};

/// How many of `points` failed.
inline std::size_t failed_count(const std::vector<PointRecord>& points) {
  std::size_t n = 0;
  for (const PointRecord& r : points) n += !r.result.ok;
  return n;
}

struct RunRecord {
  std::string bench;
  const Params* params = nullptr;
  bool interrupted = false;
  const std::vector<std::string>* overrides = nullptr;  ///< every --set, as given
  const std::vector<std::unique_ptr<Simulation>>* systems = nullptr;
  const std::vector<std::shared_ptr<const Graph>>* graphs = nullptr;  ///< per system
  const Graph* topology = nullptr;  ///< the loaded one: written when no system was built
  std::size_t elaborations = 0;     ///< distinct graphs elaborated
  Tick sim_time = 0;                ///< of every system, nested runs' and points' included
  std::uint64_t events = 0;
  double wall_s = 0.0, build_wall_s = 0.0;
  /// Configuration the run resolved besides the topology, as sections after "topology" (say, the collective
  /// configuration the bench ran with).
  Metrics config_sections;
  const std::vector<std::unique_ptr<RunObserver>>* observers = nullptr;  ///< their sections follow "op_log"
  const OpLog* op_log = nullptr;
  const Metrics* metrics = nullptr;
  const std::vector<PointRecord>* points = nullptr;
  const std::vector<std::pair<std::string, std::string>>* files = nullptr;  ///< the bench's own: name, content
  const Placement* placement = nullptr;  ///< where the systems ran (its figures go into the host section)
};

}  // namespace kbsim::core
