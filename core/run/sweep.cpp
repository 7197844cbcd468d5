#include "run/sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "cluster/world.hpp"
#include "run/point_bytes.hpp"
#include "run/workers.hpp"
#include "sim/watch.hpp"

namespace kbsim::core {

namespace {

using Clock = std::chrono::steady_clock;

/// "12/36 points, 4.1 s elapsed, about 8 s left", redrawn in place.
void show_progress(std::size_t done, std::size_t n, Clock::time_point t0, const std::string& whose) {
  const double el = std::chrono::duration<double>(Clock::now() - t0).count();
  const double left = done ? el / static_cast<double>(done) * static_cast<double>(n - done) : 0.0;
  std::fprintf(stderr, "\r  sweep%s  %zu/%zu points  %.1f s elapsed  about %.0f s left   ", whose.c_str(), done, n, el,
               left);
  if (done == n) std::fputc('\n', stderr);
  std::fflush(stderr);
}

/// Every process's share of the points, sent to every process, in the points' order.
std::vector<PointRecord> gather(const std::vector<PointRecord>& local, std::size_t n) {
  std::vector<std::string> mine;
  mine.reserve(local.size());
  for (const PointRecord& r : local) mine.push_back(encode(r));
  std::vector<PointRecord> all;
  all.reserve(n);
  for (const std::string& bytes : cluster::gather_shares(mine, n)) all.push_back(decode(bytes));
  return all;
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

}  // namespace

std::vector<PointResult> hand_over(std::vector<PointRecord> records, std::vector<PointRecord>& kept) {
  std::vector<PointResult> out;
  out.reserve(records.size());
  for (PointRecord& r : records) {
    PointRecord k;
    k.config = std::move(r.config);
    k.result.ok = r.result.ok;
    k.result.error = r.result.error;
    k.result.metrics = copy(r.result.metrics);
    k.sim_time = r.sim_time;
    k.events = r.events;
    out.push_back(std::move(r.result));
    kept.push_back(std::move(k));
  }
  return out;
}

namespace {
/// "point 3 of 12 (bench k=v; set k=v)", as errors name a point.
std::string point_name(std::size_t i, std::size_t n, const SweepPoint& p) {
  std::string s = "point " + std::to_string(i + 1) + " of " + std::to_string(n) + " (" + p.bench;
  for (const auto& kv : p.params) s += " " + kv;
  if (!p.overrides.empty()) {
    s += "; set";
    for (const auto& kv : p.overrides) s += " " + kv;
  }
  return s + ")";
}
}  // namespace

std::vector<PointRecord> sweep(const std::vector<SweepPoint>& points, const SweepOptions& o,
                               const std::function<PointRecord(const SweepPoint&, const std::string&)>& run_one) {
  const std::size_t n = points.size();
  auto describe = [&](std::size_t i) { return point_name(i, n, points[i]); };
  const bool shared = o.across_processes && cluster::processes() > 1;
  unsigned jobs = o.jobs;
  if (jobs == 0) jobs = shared ? 1 : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::size_t> mine = shared ? cluster::my_share(n) : std::vector<std::size_t>(n);
  if (!shared)
    for (std::size_t i = 0; i < n; ++i) mine[i] = i;
  const auto t0 = Clock::now();
  const std::string whose = shared ? " (" + cluster::leader_words() + "'s share)" : "";
  const bool shows = o.progress && cluster::leads();
  watch::set_points(0, mine.size());
  auto progress = [&](std::size_t done, std::size_t total) {
    watch::set_points(done, total);
    if (shows) show_progress(done, total, t0, whose);
  };
  struct Sweeping {  // the per-run progress line keeps quiet while the sweep shows its own
    bool was = watch::sweeping();
    explicit Sweeping(bool on) { watch::set_sweeping(was || on); }
    ~Sweeping() { watch::set_sweeping(was); }
  } sweeping(shows);
  std::vector<PointRecord> local = run_parallel(
      mine.size(), jobs, [&](std::size_t k) { return run_one(points[mine[k]], describe(mine[k])); },
      [&](std::size_t k) { return describe(mine[k]); }, progress);
  if (!shared) return local;
  return gather(local, n);
}

}  // namespace kbsim::core
