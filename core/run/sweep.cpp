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
void show_progress(std::size_t done, std::size_t n, Clock::time_point t0, const char* whose) {
  const double el = std::chrono::duration<double>(Clock::now() - t0).count();
  const double left = done ? el / static_cast<double>(done) * static_cast<double>(n - done) : 0.0;
  std::fprintf(stderr, "\r  sweep%s  %zu/%zu points  %.1f s elapsed  about %.0f s left   ", whose, done, n, el, left);
  if (done == n) std::fputc('\n', stderr);
  std::fflush(stderr);
}

/// Every rank's share, sent to every rank, in the points' order.
std::vector<PointRecord> gather(std::vector<PointRecord> local, std::size_t n, const cluster::World& w) {
  if (w.size == 1) return local;
  std::string bytes;
  for (const PointRecord& r : local) {
    const std::string one = encode(r);
    const std::uint64_t len = one.size();
    bytes.append(reinterpret_cast<const char*>(&len), sizeof len);
    bytes += one;
  }
  const std::vector<std::string> gathered = cluster::all_gather(bytes);
  std::vector<PointRecord> all(n);
  for (unsigned r = 0; r < w.size; ++r) {
    std::string_view from = gathered[r];
    for (std::size_t i : share_of(n, r, w.size)) {
      std::uint64_t len = 0;
      std::memcpy(&len, from.data(), sizeof len);
      all[i] = decode(from.substr(sizeof len, len));
      from.remove_prefix(sizeof len + len);
    }
  }
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

std::vector<std::size_t> share_of(std::size_t n, unsigned rank, unsigned size) {
  std::vector<std::size_t> mine;
  for (std::size_t i = rank; i < n; i += size) mine.push_back(i);
  return mine;
}

std::vector<PointRecord> sweep(const std::vector<SweepPoint>& points, const SweepOptions& o,
                               const std::function<PointRecord(const SweepPoint&, const std::string&)>& run_one) {
  const std::size_t n = points.size();
  auto describe = [&](std::size_t i) { return point_name(i, n, points[i]); };
  const cluster::World w = o.across_ranks ? cluster::world() : cluster::World{};
  unsigned jobs = o.jobs;
  if (jobs == 0) jobs = w.size > 1 ? 1 : std::max(1u, std::thread::hardware_concurrency());
  const std::vector<std::size_t> mine = share_of(n, w.rank, w.size);
  const auto t0 = Clock::now();
  const char* whose = w.size > 1 ? " (rank 0's share)" : "";
  std::function<void(std::size_t, std::size_t)> progress;
  if (o.progress && w.rank == 0)
    progress = [&](std::size_t done, std::size_t total) { show_progress(done, total, t0, whose); };
  struct Sweeping {  // the per-run progress line keeps quiet while the sweep shows its own
    bool was = watch::sweeping();
    explicit Sweeping(bool on) { watch::set_sweeping(was || on); }
    ~Sweeping() { watch::set_sweeping(was); }
  } sweeping(static_cast<bool>(progress));
  std::vector<PointRecord> local = run_parallel(
      mine.size(), jobs, [&](std::size_t k) { return run_one(points[mine[k]], describe(mine[k])); },
      [&](std::size_t k) { return describe(mine[k]); }, progress);
  return gather(std::move(local), n, w);
}

}  // namespace kbsim::core
