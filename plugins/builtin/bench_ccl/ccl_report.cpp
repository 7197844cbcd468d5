#include "ccl_report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "kbsim/ahbm/names.hpp"

namespace kbsim::bench_ccl {

void report(BenchContext& ctx, System& sys, const rt::CollectiveResult& r, const ccl::Config& cfg,
            std::uint64_t shard_bytes) {
  Metrics& out = ctx.metrics();
  const Params& p = cfg.of();
  out.set("algorithm", r.algorithm);
  out.set("buffer_kind", p.get(ccl::param::kBufferKind));
  out.set("ranks", r.ranks.size());
  out.set("n_elem", r.n_elem);
  out.set("bytes_per_cube", shard_bytes);
  out.set("slot_size", p.get(ccl::param::kSlotSize));

  // The critical path: the slowest kernel of any rank, and the collective's window.
  double crit = 0;
  Tick first = kNever, last = 0;
  Metrics& per_rank = out.list("rank_pe_exec_ns");
  for (const rt::LaunchResult& l : r.ranks) {
    double mine = 0;
    for (const ahbm::PeResult& pe : l.pes) {
      mine = std::max(mine, pe.pe_exec_ns);
      first = std::min(first, pe.start);
      last = std::max(last, pe.end);
    }
    per_rank.append(mine);
    crit = std::max(crit, mine);
  }
  out.set("crit_ns", crit);

  // Phase windows: from the first PE entering a phase to the last one leaving it.
  std::map<std::string, std::pair<Tick, Tick>> windows;
  std::vector<std::string> order;
  for (const rt::LaunchResult& l : r.ranks)
    for (const ahbm::PeResult& pe : l.pes)
      for (std::size_t k = 0; k < pe.phases.size(); ++k) {
        const auto& [name, start] = pe.phases[k];
        const Tick end = k + 1 < pe.phases.size() ? pe.phases[k + 1].second : pe.end;
        auto [it, fresh] = windows.try_emplace(name, start, end);
        if (fresh) order.push_back(name);
        it->second.first = std::min(it->second.first, start);
        it->second.second = std::max(it->second.second, end);
      }
  std::sort(order.begin(), order.end(),
            [&](const std::string& a, const std::string& b) { return windows[a].first < windows[b].first; });
  Metrics& phases = out.object("phase_window_ns");
  for (const std::string& name : order) phases.set(name, ticks_to_ns(windows[name].second - windows[name].first));
  // The phases of the PE that passes through the most of them (the longest-running among those): its times add up
  // to its kernel's, so they say which phase the collective spends its time in (for lrab, a root cube's pe0).
  const ahbm::PeResult* path = nullptr;
  for (const rt::LaunchResult& l : r.ranks)
    for (const ahbm::PeResult& pe : l.pes)
      if (!path || pe.phases.size() > path->phases.size() ||
          (pe.phases.size() == path->phases.size() && pe.pe_exec_ns > path->pe_exec_ns))
        path = &pe;
  if (path && !path->phases.empty()) {
    Metrics& along = out.object("phases_of_busiest_pe");
    along.set("pe", ahbm::names::pe(path->pe.sip, path->pe.cube, path->pe.pe));
    Metrics& ns = along.object("ns");
    for (std::size_t k = 0; k < path->phases.size(); ++k) {
      const Tick end = k + 1 < path->phases.size() ? path->phases[k + 1].second : path->end;
      ns.set(path->phases[k].first, ticks_to_ns(end - path->phases[k].second));
    }
  }

  // IPCQ payload moved, and the busiest link over the collective's window.
  std::uint64_t bytes = 0, messages = 0;
  for (NodeIndex n = 0; n < sys.node_count(); ++n) {
    const std::string_view id = sys.node_id(n);
    if (id.size() > 8 && id.substr(id.size() - 8) == ".pe_ipcq") {
      bytes += sys.stat(id, "bytes_sent").count;
      messages += sys.stat(id, "sent").count;
    }
  }
  out.set("ipcq_bytes", bytes);
  out.set("ipcq_messages", messages);
  const std::vector<LinkUse> links = sys.link_use();
  const double window = first < last ? ticks_to_ns(last - first) : 0.0;
  if (!links.empty()) {
    const LinkUse& b = *std::max_element(links.begin(), links.end(),
                                         [](const LinkUse& x, const LinkUse& y) { return x.busy_ns < y.busy_ns; });
    Metrics& bl = out.object("busiest_link");
    bl.set("src", std::string(b.src));
    bl.set("dst", std::string(b.dst));
    bl.set("kind", std::string(b.kind));
    bl.set("busy_ns", b.busy_ns);
    bl.set("bytes", b.bytes);
    bl.set("utilization", window > 0 ? b.busy_ns / window : 0.0);
  }

  const double model = reference_model_ns(shard_bytes);
  out.set("reference_model_ns", model);
  char line[320];
  std::snprintf(line, sizeof line,
                "%s over %zu ranks, %llu B per cube (%s slots): critical path %.1f ns; the reference's hand-derived "
                "model (1346 ns + 1.20 ns x %llu packets) gives %.1f ns",
                r.algorithm.c_str(), r.ranks.size(), static_cast<unsigned long long>(shard_bytes),
                p.get(ccl::param::kBufferKind).c_str(), crit, static_cast<unsigned long long>(shard_bytes * 8 / 128),
                model);
  ctx.note(line);
  if (shard_bytes == 96 * 1024) ctx.note("an external simulator (FSIM) reported 366 us for 96 KB per PE");
  if (path && !path->phases.empty()) {
    ctx.note("phases of " + ahbm::names::pe(path->pe.sip, path->pe.cube, path->pe.pe) +
             " (the PE through most of them), and each phase's window over all PEs:");
    for (std::size_t k = 0; k < path->phases.size(); ++k) {
      const auto& [name, start] = path->phases[k];
      const Tick end = k + 1 < path->phases.size() ? path->phases[k + 1].second : path->end;
      std::snprintf(line, sizeof line, "  %-18s %10.1f ns   window %10.1f ns", name.c_str(), ticks_to_ns(end - start),
                    ticks_to_ns(windows[name].second - windows[name].first));
      ctx.note(line);
    }
  }
}

}  // namespace kbsim::bench_ccl
