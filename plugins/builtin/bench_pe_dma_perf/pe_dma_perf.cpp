// pe-dma-perf: PE DMA latency by distance and makespan under contention on an
// AHBM system (--topology). Every scenario runs on a fresh System: its DMA
// transfers are submitted to the pe_dma initiators at t=0 and the System runs
// until they complete. Reported per scenario: makespan, effective bandwidth,
// and utilisation against the first route's bottleneck link and against a
// fair share of every link the scenario's routes use, and the first transfer's
// latency (the makespan, under contention) broken down as the reference does
// (breakdown.hpp). Self-checks encode the reference's invariants; any failure
// ends the run with SELF_CHECK.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "breakdown.hpp"
#include "kbsim/ahbm/bench_client.hpp"
#include "kbsim/ahbm/memory.hpp"
#include "kbsim/ahbm/memory_map.hpp"
#include "kbsim/ahbm/names.hpp"
#include "kbsim/ahbm/phys_addr.hpp"
#include "kbsim/figure.hpp"
#include "kbsim/plugin.hpp"

namespace {

namespace ahbm = kbsim::ahbm;
namespace names = kbsim::ahbm::names;
using ahbm::MemOp;

struct Pe {
  unsigned sip = 0, cube = 0, pe = 0;
};

/// One DMA: `from`'s engine moves the scenario's bytes to or from `offset` in `to`'s HBM slice.
struct Transfer {
  Pe from, to;
  std::uint64_t offset = 0;
};

struct Scenario {
  std::string name;
  std::uint64_t bytes = 0;  ///< per transfer
  /// The transfers, chosen on the scenario's own System (some pick targets by route cost).
  std::function<std::vector<Transfer>(kbsim::System&)> plan;
};

/// What the completions say.
struct Outcome {
  std::size_t submitted = 0, completed = 0, failed = 0;
  std::string first_error;
  double makespan_ns = 0.0;  ///< last completion (everything is issued at t=0)
  double latency_ns = 0.0;   ///< issue to completion of the last transfer to complete
};

/// Route-derived figures (on the path the data takes).
struct Peaks {
  double single_gbs = 0.0;     ///< bottleneck link of the first transfer's route
  double aggregate_gbs = 0.0;  ///< sum over routes of min over links of bw / routes sharing it
  unsigned ucie_crossings = 0, hops = 0;
  double route_latency_ns = 0.0;  ///< node overheads + link latencies of the first transfer's path
  /// Every transfer's route, node by node, in issue order: which of several equally short routes each took.
  std::vector<std::vector<std::string>> routes;
  /// The first transfer's data path and the way back.
  kbsim::RouteInfo data, response;
};

struct Row {
  std::string name;
  std::uint64_t bytes = 0;
  Outcome out;
  Peaks peaks;
  double eff_gbs = 0.0, util_single_pct = 0.0, util_aggregate_pct = 0.0;
  kbsim::pe_dma_perf::Breakdown parts;  ///< of the latency (one issuer) or the makespan
};

std::string dma_node(const Pe& p) { return names::pe_part(p.sip, p.cube, p.pe, "pe_dma"); }
std::string hbm_node(const Pe& p) { return names::hbm_ctrl(p.sip, p.cube, p.pe); }
/// The routing view pe_dma uses: "local" inside its own cube, "data" elsewhere.
const char* view_of(const Transfer& t) { return t.from.sip == t.to.sip && t.from.cube == t.to.cube ? "local" : "data"; }

/// The slice among `candidates` whose request route from `from` is quickest (or slowest) for a 0-byte
/// message, whatever the routing metric; the first on a tie.
Pe pick(kbsim::System& sys, const Pe& from, const std::vector<Pe>& candidates, bool least) {
  auto cost = [&](const Pe& to) {
    return sys.route_info(dma_node(from), hbm_node(to), view_of({from, to})).latency_ns();
  };
  Pe best = candidates.front();
  for (const Pe& c : candidates)
    if (least ? cost(c) < cost(best) : cost(c) > cost(best)) best = c;
  return best;
}

/// The system's shape, as far as the scenarios need it.
struct Layout {
  unsigned sips = 1, cubes = 1, pes = 1, cube_w = 1;

  std::vector<Pe> slices(unsigned sip, unsigned cube) const {
    std::vector<Pe> out;
    for (unsigned p = 0; p < pes; ++p) out.push_back({sip, cube, p});
    return out;
  }
  std::vector<Pe> sip_pes(unsigned sip) const {
    std::vector<Pe> out;
    for (unsigned c = 0; c < cubes; ++c)
      for (const Pe& p : slices(sip, c)) out.push_back(p);
    return out;
  }
  /// Every slice of the cubes next to cube 0 (east and south).
  std::vector<Pe> next_to_cube0() const {
    std::vector<Pe> out = cube_w > 1 ? slices(0, 1) : std::vector<Pe>{};
    if (cube_w < cubes)
      for (const Pe& p : slices(0, cube_w)) out.push_back(p);
    return out;
  }
};

/// Every issuer in `issuers` into `target`'s slice, each at its own offset.
std::vector<Transfer> fan_in(const std::vector<Pe>& issuers, const Pe& target, std::uint64_t bytes) {
  std::vector<Transfer> out;
  for (std::size_t k = 0; k < issuers.size(); ++k) out.push_back({issuers[k], target, k * bytes});
  return out;
}

std::vector<Scenario> scenarios(const Layout& l, std::uint64_t bytes, std::uint64_t sip_bytes, bool sip_wide) {
  const Pe pe0{0, 0, 0};
  auto one = [&](Pe to) { return [=](kbsim::System&) { return std::vector<Transfer>{{pe0, to, 0}}; }; };
  auto chosen = [&](const std::vector<Pe>& candidates, bool least) {
    return [=](kbsim::System& sys) { return std::vector<Transfer>{{pe0, pick(sys, pe0, candidates, least), 0}}; };
  };
  auto fixed = [](const std::vector<Transfer>& ts) { return [=](kbsim::System&) { return ts; }; };
  auto cube0 = l.slices(0, 0);

  std::vector<Scenario> s = {
      {"same_cube_pe_local", bytes, one(pe0)},
      {"same_cube_pe_remote_best", bytes, one({0, 0, 1})},
      {"same_cube_pe_remote_worst", bytes, chosen(cube0, false)},
      {"remote_cube_best", bytes, chosen(l.next_to_cube0(), true)},
      {"remote_cube_worst", bytes, chosen(l.slices(0, l.cubes - 1), false)},
  };
  if (l.sips > 1) s.push_back({"remote_sip", bytes, one({1, 0, 0})});
  for (unsigned k = 1; k <= 3; ++k)
    s.push_back({"ctrl_hot_" + std::to_string(k), bytes,
                 fixed(fan_in(std::vector<Pe>(cube0.begin() + 1, cube0.begin() + 1 + k), pe0, bytes))});
  std::vector<Transfer> east;
  for (unsigned p = 0; p < cube0.size(); ++p) east.push_back({cube0[p], {0, 1, p}, 0});
  s.push_back({"eastbound_8pe", bytes, fixed(east)});
  s.push_back({"all_pe_cube0_to_pe0", bytes, fixed(fan_in(cube0, pe0, bytes))});
  if (!sip_wide) return s;
  std::vector<Transfer> own;
  for (const Pe& p : l.sip_pes(0)) own.push_back({p, p, 0});
  s.push_back({"sip_local_all", sip_bytes, fixed(own)});
  s.push_back({"sip_hotspot_pe0", sip_bytes, fixed(fan_in(l.sip_pes(0), pe0, sip_bytes))});
  return s;
}

class Recorder final : public ahbm::MemClient {
 public:
  void on_complete(ahbm::MemRequest& r) override {
    ++out.completed;
    out.makespan_ns = std::max(out.makespan_ns, kbsim::ticks_to_ns(r.t_done));
    out.latency_ns = kbsim::ticks_to_ns(r.t_done - r.t_issue);
    if (!r.completion.ok && out.failed++ == 0)
      out.first_error = r.completion.error_code + ": " + r.completion.error_message;
  }
  Outcome out;
};

Outcome execute(kbsim::System& sys, const std::vector<Transfer>& ts, std::uint64_t bytes, MemOp op,
                std::uint64_t slice_bytes) {
  Recorder rec;
  ahbm::BenchMemClient client(sys, rec);  // (so every rank of a split run hears of every completion)
  for (const Transfer& t : ts) {
    std::string id = dma_node(t.from);
    ahbm::MemInitiator* dma = ahbm::as_initiator(sys.component(id));
    if (dma == nullptr) throw kbsim::BenchError("NOT_AN_INITIATOR", id + " does not accept memory requests");
    auto r = kbsim::make_message<ahbm::MemRequest>();
    r->op = op;
    r->pa = ahbm::pe_hbm_addr(t.to.sip, t.to.cube, t.to.pe, t.offset, slice_bytes);
    r->nbytes = bytes;
    ++rec.out.submitted;
    client.submit(*dma, std::move(r));
  }
  client.run();
  return rec.out;
}

/// The path the data takes (PE -> HBM for a write, HBM -> PE for a read), or with `back` the other way.
kbsim::RouteInfo data_route(kbsim::System& sys, const Transfer& t, MemOp op, bool back = false) {
  std::string pe = dma_node(t.from), hbm = hbm_node(t.to);
  return (op == MemOp::kWrite) != back ? sys.route_info(pe, hbm, view_of(t)) : sys.route_info(hbm, pe, view_of(t));
}

bool is_ucie_crossing(std::string_view link_kind) {
  return link_kind == "ucie_mesh" || link_kind == "cube_to_io" || link_kind == "io_to_cube";
}

Peaks analyse(kbsim::System& sys, const std::vector<Transfer>& ts, MemOp op) {
  using Link = std::pair<std::string_view, std::string_view>;  // (node, next node); views into sys
  std::vector<kbsim::RouteInfo> routes;
  std::map<Link, unsigned> users;
  Peaks p;
  for (const Transfer& t : ts) {
    routes.push_back(data_route(sys, t, op));
    const auto& h = routes.back().hops;
    for (std::size_t k = 0; k + 1 < h.size(); ++k) ++users[{h[k].node, h[k + 1].node}];
    auto& nodes = p.routes.emplace_back();
    for (const auto& hop : h) nodes.emplace_back(hop.node);
  }
  auto share = [&](const kbsim::RouteInfo& r, bool alone) {
    double s = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k + 1 < r.hops.size(); ++k)
      if (r.hops[k].link_bw_gbs > 0)  // 0 = unlimited
        s = std::min(s, r.hops[k].link_bw_gbs / (alone ? 1 : users[{r.hops[k].node, r.hops[k + 1].node}]));
    return std::isinf(s) ? 0.0 : s;
  };
  if (routes.empty()) return p;
  p.single_gbs = share(routes.front(), true);
  for (const auto& r : routes) p.aggregate_gbs += share(r, false);
  const auto& first = routes.front().hops;
  p.data = routes.front();
  p.response = data_route(sys, ts.front(), op, true);
  p.hops = static_cast<unsigned>(first.size() - 1);
  p.route_latency_ns = routes.front().latency_ns();
  for (const auto& h : first) p.ucie_crossings += is_ucie_crossing(h.link_kind) ? 1 : 0;
  return p;
}

/// What the HBM controller `node` spent on one burst, on average (its pseudo-channels' busy time per burst).
double burst_service_ns(kbsim::System& sys, const std::string& node) {
  constexpr std::string_view kBusy = "pc_busy_ns", kBursts = "bursts";  // the hbm_ctrl block's statistics
  const double bursts = static_cast<double>(sys.stat(node, kBursts).count);
  return bursts > 0 ? sys.stat(node, kBusy).value / bursts : 0.0;
}

Row measure(const Scenario& s, kbsim::System& sys, MemOp op, std::uint64_t slice_bytes) {
  std::vector<Transfer> ts = s.plan(sys);
  Row row{s.name, s.bytes, {}, analyse(sys, ts, op), 0.0, 0.0, 0.0, {}};
  row.out = execute(sys, ts, s.bytes, op, slice_bytes);
  auto pct = [](double eff, double peak) { return peak > 0 ? eff / peak * 100.0 : 0.0; };
  if (row.out.makespan_ns > 0) row.eff_gbs = static_cast<double>(row.out.submitted * s.bytes) / row.out.makespan_ns;
  row.util_single_pct = pct(row.eff_gbs, row.peaks.single_gbs);
  row.util_aggregate_pct = pct(row.eff_gbs, row.peaks.aggregate_gbs);
  if (!ts.empty())
    row.parts =
        kbsim::pe_dma_perf::breakdown(row.peaks.data, &row.peaks.response, s.bytes,
                                      // a write's acknowledgement waits for its last burst's commit; a
                                      // read's bursts are read as its flits stream (wire_transfer)
                                      op == MemOp::kWrite ? burst_service_ns(sys, hbm_node(ts.front().to)) : 0.0,
                                      ts.size() == 1 ? row.out.latency_ns : row.out.makespan_ns);
  return row;
}

void report(const Row& r, kbsim::Metrics& m, kbsim::BenchContext& ctx) {
  m.set("issuers", static_cast<std::uint64_t>(r.out.submitted));
  m.set("bytes", r.bytes);
  m.set("makespan_ns", r.out.makespan_ns);
  if (r.out.submitted == 1) m.set("latency_ns", r.out.latency_ns);
  for (auto [key, value] : {std::pair{"eff_bw_gbs", r.eff_gbs},
                            {"peak_single_gbs", r.peaks.single_gbs},
                            {"util_single_pct", r.util_single_pct},
                            {"peak_aggregate_gbs", r.peaks.aggregate_gbs},
                            {"util_aggregate_pct", r.util_aggregate_pct}})
    m.set(key, value);
  m.set("ucie_crossings", std::uint64_t{r.peaks.ucie_crossings});
  m.set("hops", std::uint64_t{r.peaks.hops});
  m.set("route_latency_ns", r.peaks.route_latency_ns);
  kbsim::Metrics& parts = m.object("breakdown");  // of latency_ns (one issuer) or makespan_ns
  for (const auto& [name, ns] : r.parts.parts()) parts.set(std::string(name) + "_ns", ns);
  parts.set("formula_ns", r.parts.formula_ns());
  m.set("completed", std::uint64_t{r.out.completed});
  m.set("failed", std::uint64_t{r.out.failed});
  if (!r.peaks.routes.empty()) {
    auto& route = m.list("route");  // the first transfer's
    for (const auto& node : r.peaks.routes.front()) route.append(node);
  }
  if (r.peaks.routes.size() > 1) {
    auto& routes = m.list("routes");
    for (const auto& nodes : r.peaks.routes) {
      auto& one = routes.append_list();
      for (const auto& node : nodes) one.append(node);
    }
  }
  char line[160];
  std::snprintf(line, sizeof line, "%-26s %7zu %11.2f %8.1f %12.1f %9.1f", r.name.c_str(), r.out.submitted,
                r.out.makespan_ns, r.eff_gbs, r.util_single_pct, r.util_aggregate_pct);
  ctx.note(line);
}

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

/// The transfer size of the reference's runs: the checks that hold only for transfers that long (the streaming
/// term against the local latency, the hotspot's share) are made at it and above.
constexpr std::uint64_t kReferenceBytes = 16384;

/// The reference's invariants over the rows; records each and says whether all held.
class Checks {
 public:
  Checks(const std::vector<Row>& rows, bool writes, kbsim::BenchContext& ctx)
      : rows_(rows), writes_(writes), ctx_(ctx) {}

  /// Every failure as "name: detail; ...", empty if all held.
  std::string run() {
    distance();
    ucie();
    utilisation();
    contention();
    breakdown();
    shares();
    completion();
    return failures_;
  }

 private:
  const Row* find(const std::string& name) const {
    for (const Row& r : rows_)
      if (r.name == name) return &r;
    return nullptr;
  }
  void record(const std::string& name, const std::string& failures) {
    bool pass = failures.empty();
    if (!pass) failures_ += (failures_.empty() ? "" : "; ") + name + ":" + failures;
    ctx_.metrics().object("checks").set(name, pass);
    ctx_.note(pass ? "PASS " + name : "FAIL " + name + ":" + failures);
  }

  void distance() {
    struct Step {
      const char *a, *b;
      bool strict;
    } static constexpr kOrder[] = {{"same_cube_pe_local", "same_cube_pe_remote_best", true},
                                   {"same_cube_pe_remote_best", "same_cube_pe_remote_worst", false},
                                   {"same_cube_pe_remote_worst", "remote_cube_best", true},
                                   {"remote_cube_best", "remote_cube_worst", false},
                                   // Where the other SIP falls against the farthest cube depends on the size
                                   // (its path is store-and-forward at both PCIe endpoints); the fidelity bench
                                   // checks the reference's order at its 16 KiB.
                                   {"same_cube_pe_remote_worst", "remote_sip", true}};
    std::string bad;
    for (const Step& s : kOrder) {
      const Row *a = find(s.a), *b = find(s.b);
      if (!a || !b) continue;
      double x = a->out.latency_ns, y = b->out.latency_ns;
      if (s.strict ? !(x < y) : !(x <= y))
        bad += std::string(" ") + s.a + " " + fmt(x) + " ns " + (s.strict ? "!<" : "!<=") + " " + s.b + " " + fmt(y);
    }
    record("distance_monotonic", bad);
  }

  void ucie() {
    std::string same, remote;
    for (const char* n : {"same_cube_pe_local", "same_cube_pe_remote_best", "same_cube_pe_remote_worst", "ctrl_hot_1",
                          "ctrl_hot_2", "ctrl_hot_3", "all_pe_cube0_to_pe0"})
      if (const Row* r = find(n); r && r->peaks.ucie_crossings != 0) same += std::string(" ") + n;
    for (const char* n : {"remote_cube_best", "remote_cube_worst", "remote_sip", "eastbound_8pe"})
      if (const Row* r = find(n); r && r->peaks.ucie_crossings == 0) remote += std::string(" ") + n;
    record("same_cube_no_ucie", same);
    record("remote_cube_crosses_ucie", remote);
  }

  void utilisation() {
    std::string over, single;
    for (const Row& r : rows_) {
      if (r.util_aggregate_pct > 100.5) over += " " + r.name + " " + fmt(r.util_aggregate_pct) + "%";
      if (r.out.submitted == 1 && std::abs(r.util_single_pct - r.util_aggregate_pct) > 1e-9)
        single += " " + r.name + " " + fmt(r.util_single_pct) + " != " + fmt(r.util_aggregate_pct);
    }
    record("aggregate_util_le_100", over);
    record("single_issuer_util_consistent", single);
  }

  void contention() {
    const Row *h1 = find("ctrl_hot_1"), *h2 = find("ctrl_hot_2"), *h3 = find("ctrl_hot_3");
    const Row* all = find("all_pe_cube0_to_pe0");
    std::string mono, more;
    if (!(h1->out.makespan_ns <= h2->out.makespan_ns && h2->out.makespan_ns <= h3->out.makespan_ns))
      mono = " " + fmt(h1->out.makespan_ns) + ", " + fmt(h2->out.makespan_ns) + ", " + fmt(h3->out.makespan_ns) + " ns";
    if (!(all->out.makespan_ns > h3->out.makespan_ns))
      more = " " + fmt(all->out.makespan_ns) + " ns <= ctrl_hot_3 " + fmt(h3->out.makespan_ns) + " ns";
    record("makespan_monotonic_in_issuers", mono);
    record("all_pe_slower_than_ctrl_hot_3", more);
  }

  /// The breakdown explains a lone write: the path's formula never exceeds it, the streaming term is the local
  /// transfer's latency within 5 %, and what is left is under 25 % of it inside a SIP, 70 % across SIPs (whose PCIe
  /// endpoints store and forward). (A read's stream starts at the HBM controller, which may feed it slower than the
  /// path carries it: the first flit's hop overheads then hide behind the stream, and the formula may exceed the
  /// latency. Its breakdown is reported, not checked.)
  void breakdown() {
    if (!writes_) return;
    std::string over, local, left;
    for (const Row& r : rows_) {
      if (r.out.submitted != 1) continue;
      const double actual = r.out.latency_ns, rest = r.parts.contention_ns;
      if (rest < -1e-6) over += " " + r.name + " " + fmt(r.parts.formula_ns()) + " > " + fmt(actual) + " ns";
      const double limit = r.name == "remote_sip" ? 70.0 : 25.0;
      if (actual > 0 && rest / actual * 100.0 >= limit)
        left += " " + r.name + " " + fmt(rest / actual * 100.0) + "% >= " + fmt(limit) + "%";
    }
    const Row* l = find("same_cube_pe_local");
    if (l && std::abs(l->parts.contention_ns) > 0.05 * l->parts.wire_transfer_ns)
      local = " residual " + fmt(l->parts.contention_ns) + " ns > 5% of " + fmt(l->parts.wire_transfer_ns) + " ns";
    record("formula_le_actual", over);
    if (l && l->bytes >= kReferenceBytes) record("local_wire_transfer_within_5pct", local);
    record("contention_residual_bounded", left);
  }

  /// Shares of the peaks: one issuer uses at most its own path (n issuers at most n of them, +5 %); eight PEs into
  /// one slice keep it at least 70 % busy; eastbound flows sharing one UCIe connection get less of the aggregate
  /// peak than the first alone gets of its path.
  void shares() {
    std::string single, hot, east;
    for (const Row& r : rows_)
      if (r.util_single_pct > static_cast<double>(r.out.submitted) * 100.0 + 5.0)
        single += " " + r.name + " " + fmt(r.util_single_pct) + "%";
    const Row* all = find("all_pe_cube0_to_pe0");
    if (all && all->util_aggregate_pct < 70.0) hot = " " + fmt(all->util_aggregate_pct) + "% < 70%";
    if (const Row* r = find("eastbound_8pe"); r && !(r->util_aggregate_pct < r->util_single_pct))
      east = " aggregate " + fmt(r->util_aggregate_pct) + "% >= single " + fmt(r->util_single_pct) + "%";
    record("util_single_le_issuers", single);
    if (all && all->bytes >= kReferenceBytes) record("hotspot_8pe_ge_70pct", hot);
    record("eastbound_aggregate_below_single", east);
  }

  void completion() {
    std::string bad;
    for (const Row& r : rows_) {
      if (r.out.completed != r.out.submitted)
        bad += " " + r.name + " completed " + std::to_string(r.out.completed) + "/" + std::to_string(r.out.submitted);
      if (r.out.failed)
        bad += " " + r.name + " " + std::to_string(r.out.failed) + " failed (" + r.out.first_error + ")";
    }
    record("all_completed_ok", bad);
  }

  const std::vector<Row>& rows_;
  bool writes_;  ///< the scenarios wrote (else they read)
  kbsim::BenchContext& ctx_;
  std::string failures_;
};

std::string routing_note(kbsim::RouteMetric m) {
  return m == kbsim::RouteMetric::kDistance
             ? "routing: distance (shortest wire, ties to the first name: one UCIe connection carries most flows)"
             : "routing: latency (quickest path: each flow takes its nearest UCIe connection)";
}

constexpr kbsim::IntParam kBytes{"bytes", 16384, "bytes per transfer (distance and congestion scenarios)"};
constexpr kbsim::IntParam kSipBytes{"sip_bytes", 16384, "bytes per transfer of the SIP-wide scenarios"};
constexpr kbsim::StringParam kOp{"op", "write", "write (PE -> HBM) or read (HBM -> PE)"};
constexpr kbsim::BoolParam kSipWide{"sip_wide", true, "also run the SIP-wide scenarios (every PE of SIP 0)"};
constexpr kbsim::BoolParam kCheck{"check", true, "fail (SELF_CHECK) when a self-check fails; false: only record them"};

class PeDmaPerf final : public kbsim::Bench {
 public:
  static kbsim::BenchInfo info() {
    kbsim::BenchInfo i{"pe-dma-perf",
                       "PE DMA latency by distance and makespan under contention on an AHBM system, with self-checks",
                       {kBytes, kSipBytes, kOp, kSipWide, kCheck}};
    i.splits = true;  // it drives the initiators through a BenchMemClient, and reads statistics
    i.reads_topology = true;
    return i;
  }

  void run(kbsim::BenchContext& ctx) override {
    const kbsim::Params& p = ctx.params();
    const kbsim::Graph& graph = ctx.topology();
    const ahbm::MemoryMap map = ahbm::MemoryMap::from(graph.attrs);
    const auto bytes = static_cast<std::uint64_t>(p.get(kBytes));
    const auto sip_bytes = static_cast<std::uint64_t>(p.get(kSipBytes));
    const std::string& op_name = p.get(kOp);
    check_params(p, map);
    const MemOp op = op_name == "read" ? MemOp::kRead : MemOp::kWrite;
    const auto* w = kbsim::find_attr(graph.attrs, kbsim::ahbm::attrs::kCubeW.name);  // absent: one row of cubes
    Layout layout{map.sips, map.cubes_per_sip, map.pes_per_cube,
                  w && std::holds_alternative<std::int64_t>(*w) ? static_cast<unsigned>(std::get<std::int64_t>(*w))
                                                                : map.cubes_per_sip};

    ctx.note("op " + op_name + ", " + std::to_string(bytes) + " bytes per transfer (SIP-wide " +
             std::to_string(sip_bytes) + "), " + routing_note(graph.route_metric));
    ctx.metrics().set("routing", std::string(kbsim::route_metric_name(graph.route_metric)));
    ctx.note("scenario                   issuers makespan_ns eff_GB/s util_single% util_agg%");
    std::vector<Row> rows;
    std::uint64_t submitted = 0;
    for (const Scenario& s : scenarios(layout, bytes, sip_bytes, p.get(kSipWide))) {
      kbsim::System& sys = ctx.build(graph);  // a fresh system: scenarios do not disturb each other
      if (rows.empty())  // every PE's DMA engine must take memory requests (a block swapped in may not)
        for (unsigned sip = 0; sip < layout.sips; ++sip)
          for (unsigned cube = 0; cube < layout.cubes; ++cube)
            for (unsigned pe = 0; pe < layout.pes; ++pe) ahbm::initiator_of(sys, graph, dma_node({sip, cube, pe}));
      rows.push_back(measure(s, sys, op, map.slice_bytes));
      submitted += rows.back().out.submitted;
      report(rows.back(), ctx.metrics().object("scenarios").object(s.name), ctx);
      ctx.release(sys);  // its results stay; the next scenario's system reuses its memory
    }
    if (submitted == 0) throw kbsim::BenchError("NO_REQUESTS", "pe-dma-perf submitted no transfer");
    write_figures(ctx);
    if (std::string failed = Checks(rows, op == MemOp::kWrite, ctx).run(); !failed.empty() && p.get(kCheck))
      throw kbsim::BenchError("SELF_CHECK", failed);
  }

 private:
  /// pe_dma_latency.svg, pe_dma_utilization.svg (bars coloured by the reference's bands: green >= 70 %, amber
  /// >= 40 %, red below; capped at 150 % with an arrow), pe_dma_perf.csv and index.html, from the metrics.
  static void write_figures(kbsim::BenchContext& ctx) {
    namespace fig = kbsim::fig;
    const kbsim::Metrics* sc = ctx.metrics().find("scenarios")->node.get();
    fig::BarChart lat, util;
    lat.title = "PE_DMA latency per scenario";
    lat.y = {"makespan (ns)", true, std::nullopt, std::nullopt, 10, {}};
    lat.value_labels = true;
    util.title = "PE_DMA utilization per scenario";
    util.y = {"aggregate utilization (% of peak)", false, 0.0, 160.0, 10, {}};
    util.cap = 150.0;
    util.value_labels = true;
    util.bands = {{70, 160, "#2ca02c", "good (>= 70 %)"}, {40, 70, "#ff7f0e", "fair"}, {0, 40, "#d62728", "poor"}};
    fig::BarChart::Group l{"makespan", {}, "#1f77b4"}, u{"utilization", {}, ""};
    fig::Table t{"Scenarios",
                 {"scenario", "issuers", "bytes", "makespan_ns", "eff_bw_gbs", "util_single_pct", "util_aggregate_pct",
                  "hops", "ucie_crossings"},
                 {}};
    for (const kbsim::Metrics::Entry& e : sc->entries()) {
      const kbsim::Metrics& m = *e.node;
      auto n = [&](const char* k) { return m.number(k).value_or(0); };
      lat.categories.push_back(e.key);
      util.categories.push_back(e.key);
      l.values.push_back(n("makespan_ns"));
      const double pct = n("util_aggregate_pct");
      u.values.push_back(pct);
      util.bar_colors.push_back(pct >= 70 ? "#2ca02c" : pct >= 40 ? "#ff7f0e" : "#d62728");
      char b[5][32];
      std::snprintf(b[0], 32, "%.1f", n("makespan_ns"));
      std::snprintf(b[1], 32, "%.2f", n("eff_bw_gbs"));
      std::snprintf(b[2], 32, "%.1f", n("util_single_pct"));
      std::snprintf(b[3], 32, "%.1f", pct);
      t.rows.push_back({e.key, std::to_string(static_cast<long long>(n("issuers"))),
                        std::to_string(static_cast<long long>(n("bytes"))), b[0], b[1], b[2], b[3],
                        std::to_string(static_cast<long long>(n("hops"))),
                        std::to_string(static_cast<long long>(n("ucie_crossings")))});
    }
    lat.groups = {l};
    util.groups = {u};
    const fig::Table parts = breakdown_table(*sc);
    ctx.write_file("pe_dma_latency.svg", fig::svg(lat));
    ctx.write_file("pe_dma_utilization.svg", fig::svg(util));
    ctx.write_file("breakdown_no_congestion.svg", fig::svg(breakdown_chart(*sc, false)));
    ctx.write_file("breakdown_congestion.svg", fig::svg(breakdown_chart(*sc, true)));
    ctx.write_file("pe_dma_perf.csv", fig::csv(t));
    ctx.write_file("pe_dma_breakdown.csv", fig::csv(parts));
    ctx.write_file(
        "index.html",
        fig::index_html("kbsim PE_DMA performance",
                        {{"pe_dma_latency.svg", "Makespan of each scenario's transfers"},
                         {"pe_dma_utilization.svg",
                          "Aggregate bandwidth against the scenario's peak (bands: green >= 70 %, amber >= 40 %, red "
                          "below; bars above 150 % are capped with an arrow)"},
                         {"breakdown_no_congestion.svg", "Latency of a lone transfer, by part of its path"},
                         {"breakdown_congestion.svg",
                          "Makespan under contention: the first issuer's path, and the rest (contention)"}},
                        {t, parts}));
  }

  /// The parts of each scenario's latency (one issuer) or makespan (several), as stacked bars.
  static kbsim::fig::BarChart breakdown_chart(const kbsim::Metrics& sc, bool congestion) {
    namespace fig = kbsim::fig;
    static constexpr const char* kColors[] = {"#9467bd", "#1f77b4", "#ff7f0e", "#8c564b",
                                              "#2ca02c", "#17becf", "#d62728"};
    fig::BarChart c;
    c.title = congestion ? "PE_DMA makespan breakdown under contention" : "PE_DMA latency breakdown (one transfer)";
    c.y = {congestion ? "makespan (ns)" : "latency (ns)", false, 0.0, std::nullopt, 10, {}};
    c.stacked = true;
    const kbsim::pe_dma_perf::Breakdown none;
    for (std::size_t k = 0; k < none.parts().size(); ++k)
      c.groups.push_back({std::string(none.parts()[k].first), {}, kColors[k]});
    for (const kbsim::Metrics::Entry& e : sc.entries()) {
      const kbsim::Metrics& m = *e.node;
      if ((m.number("issuers").value_or(0) > 1) != congestion) continue;
      c.categories.push_back(e.key);
      const kbsim::Metrics& b = *m.find("breakdown")->node;
      for (fig::BarChart::Group& g : c.groups)
        g.values.push_back(std::max(0.0, b.number(g.name + "_ns").value_or(0)));  // (a negative residual: none)
    }
    return c;
  }

  static kbsim::fig::Table breakdown_table(const kbsim::Metrics& sc) {
    kbsim::fig::Table t{
        "Latency breakdown (ns; under contention, of the makespan on the first issuer's path)", {"scenario"}, {}};
    for (const auto& [name, ns] : kbsim::pe_dma_perf::Breakdown{}.parts())
      t.header.push_back(std::string(name) + "_ns");
    t.header.push_back("formula_ns");
    for (const kbsim::Metrics::Entry& e : sc.entries()) {
      const kbsim::Metrics& b = *e.node->find("breakdown")->node;
      std::vector<std::string> row{e.key};
      for (std::size_t k = 1; k < t.header.size(); ++k) {
        char v[32];
        std::snprintf(v, sizeof v, "%.1f", b.number(t.header[k]).value_or(0));
        row.emplace_back(v);
      }
      t.rows.push_back(std::move(row));
    }
    return t;
  }

  static void check_params(const kbsim::Params& p, const ahbm::MemoryMap& map) {
    const std::int64_t slice = static_cast<std::int64_t>(map.slice_bytes);
    const std::int64_t sip_pes = map.cubes_per_sip * map.pes_per_cube;
    p.check(p.get(kOp) == "write" || p.get(kOp) == "read", kOp, "must be write or read");
    p.check(p.get(kBytes) > 0 && p.get(kBytes) <= slice / map.pes_per_cube, kBytes,
            "must be in 1.." + std::to_string(slice / map.pes_per_cube) + " (a cube's PEs share one HBM slice)");
    p.check(p.get(kSipBytes) > 0 && p.get(kSipBytes) <= slice / sip_pes, kSipBytes,
            "must be in 1.." + std::to_string(slice / sip_pes) + " (every PE of a SIP shares one HBM slice)");
    if (map.cubes_per_sip < 2 || map.pes_per_cube < 4)
      throw kbsim::ConfigError("pe-dma-perf needs at least 2 cubes per SIP and 4 PEs per cube");
  }
};

}  // namespace

KBSIM_PLUGIN("bench_pe_dma_perf") { kbsim::add_bench<PeDmaPerf>(plugin); }
