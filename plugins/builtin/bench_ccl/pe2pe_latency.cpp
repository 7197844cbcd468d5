// pe2pe-latency (docs/model.md, "Collectives"): PE-to-PE latency over four
// hops of SIP 0, from cube 0's pe0 to
//   h1  pe2 of the same cube (horizontal: NW corner to NE corner)
//   h2  pe4 of the same cube (vertical: NW corner to SW corner)
//   h3  pe0 of cube 1 (the east neighbour)
//   h4  pe0 of cube w (the south neighbour)
// for each message size, three ways, each a fresh launch measured as the
// slowest of the two kernels (pe_exec_ns):
//   ipcq          tl.send + tl.recv: the whole protocol (slot write, slot read, the credit back)
//   ipcq_arrival  tl.send + tl.recv_no_consume: the message's arrival only
//   raw_dma       the sender's tl.store into the receiver's TCM: a DMA write and its acknowledgement
// The source is a tensor already in the sender's TCM in all three.
#include <algorithm>
#include <cstdio>
#include <span>
#include <sstream>

#include "ccl_report.hpp"
#include "kbsim/ahbm/phys_addr.hpp"
#include "kbsim/figure.hpp"
#include "kbsim/pe/ipcq.hpp"
#include "kbsim/pe/kernels.hpp"
#include "kbsim/tl/tl.hpp"

namespace kbsim::bench_ccl {

namespace {

enum Mode : std::int64_t { kIpcq, kArrival, kRaw };

struct Hop {
  const char* name;
  const char* what;
  unsigned cube, pe;  ///< the receiver (the sender is cube 0 pe 0)
  const char* dir;    ///< the sender's direction towards it
};

std::int64_t dir_index(std::string_view d) {
  return std::find(pe::kDirections.begin(), pe::kDirections.end(), d) - pe::kDirections.begin();
}

/// (mode, receiver cube, receiver pe, bytes, receiver TCM address, direction index)
void pe2pe_kernel(tl::Program& tl, const tl::Args& a) {
  const auto mode = a.i64(0);
  const auto rc = a.i64(1), rp = a.i64(2), n = a.i64(3);
  const auto dst = static_cast<std::uint64_t>(a.i64(4));
  const std::string_view dir = pe::kDirections.at(static_cast<std::size_t>(a.i64(5)));
  const std::int64_t cube = tl.program_id(1), p = tl.program_id(0);
  const Shape shape{n};
  if (cube == 0 && p == 0) {
    tl::Tensor src = tl.full(shape, 1.0, DType::kU8);
    if (mode == kRaw)
      tl.store(dst, src);
    else
      tl.send(dir, src);
  } else if (cube == rc && p == rp && mode != kRaw) {
    const std::string back(pe::opposite_direction(dir));
    if (mode == kIpcq)
      tl.recv(back, shape, DType::kU8);
    else
      tl.recv_no_consume(back, shape, DType::kU8);
  }
}

constexpr StringParam kSizes{"sizes", "128,256,512,1024,2048,4096,8192,10240", "message sizes in bytes"};

std::vector<std::int64_t> sizes_of(const Params& p) {
  std::vector<std::int64_t> out;
  std::stringstream in(p.get(kSizes));
  for (std::string item; std::getline(in, item, ',');) {
    const ParamValue v = parse_scalar(item);
    const auto* i = std::get_if<std::int64_t>(&v);
    p.check(i && *i >= 1 && *i <= (1 << 24), kSizes, "must be a comma-separated list of byte counts in 1..16777216");
    out.push_back(*i);
  }
  p.check(!out.empty(), kSizes, "must name at least one size");
  return out;
}

class Pe2PeLatency final : public Bench {
 public:
  static BenchInfo info() {
    BenchInfo i{"pe2pe-latency",
                "PE-to-PE latency over 4 hops (intra-cube horizontal/vertical, inter-cube horizontal/vertical): IPCQ "
                "send + recv, send + recv_no_consume, and a raw DMA write, for each size",
                {kSizes}};
    i.splits = true;  // it drives the system through the host runtime only
    i.reads_topology = true;
    return i;
  }

  void run(BenchContext& ctx) override {
    const std::vector<std::int64_t> sizes = sizes_of(ctx.params());
    System& sys = ctx.configured();
    auto& rt = sys.service<rt::Runtime>();
    auto& dist = sys.service<rt::Distributed>();
    const ccl::SystemShape shape = ccl::SystemShape::from(sys.attrs());
    if (shape.pes_per_cube < 5 || shape.cube_h < 2 || shape.cube_w < 2)
      throw BenchError("TOO_SMALL", "needs cubes of at least 5 PEs in a mesh of at least 2 x 2 cubes");
    const Hop hops[] = {{"h1", "intra-cube horizontal", 0, 2, "intra_E"},
                        {"h2", "intra-cube vertical", 0, 4, "intra_S"},
                        {"h3", "inter-cube horizontal", 1, 0, "E"},
                        {"h4", "inter-cube vertical", shape.cube_w, 0, "S"}};
    ccl::Config cfg = ccl::config(ctx);
    Params& cp = cfg.algorithms.at(cfg.algorithm).params;
    const std::int64_t largest = *std::max_element(sizes.begin(), sizes.end());
    for (ParamEntry& e : cp.entries())
      if (e.name == ccl::param::kSlotSize.name && std::get<std::int64_t>(e.value) < largest) e.value = largest;
    std::vector<ccl::Wire> wires;
    for (const Hop& h : hops) {
      wires.push_back({{0, 0, 0}, h.dir, {0, h.cube, h.pe}});
      wires.push_back({{0, h.cube, h.pe}, std::string(pe::opposite_direction(h.dir)), {0, 0, 0}});
    }
    dist.install_ipcq(wires, cfg);

    Metrics& cases = ctx.metrics().list("cases");
    bool ordered = true;
    for (const Hop& h : hops)
      for (std::int64_t n : sizes) {
        double ns[3];
        for (std::int64_t mode : {kIpcq, kArrival, kRaw}) {
          rt::LaunchOptions opt;
          opt.sip = 0;
          opt.grid_cubes = h.cube + 1;
          opt.grid_pes = h.pe + 1;
          const auto dst = static_cast<std::int64_t>(ahbm::pe_tcm_addr(0, h.cube, h.pe, 0));
          const rt::LaunchResult& r = rt.wait(rt.launch(
              "pe2pe-latency", {mode, std::int64_t{h.cube}, std::int64_t{h.pe}, n, dst, dir_index(h.dir)}, opt));
          ns[mode] = r.pe_exec_ns;
        }
        Metrics& c = cases.append();
        c.set("hop", h.name);
        c.set("bytes", n);
        c.set("ipcq_ns", ns[kIpcq]);
        c.set("ipcq_arrival_ns", ns[kArrival]);
        c.set("raw_dma_ns", ns[kRaw]);
        ordered = ordered && ns[kIpcq] >= ns[kRaw];
        char line[160];
        std::snprintf(line, sizeof line, "%s %-22s %6lld B: ipcq %8.2f ns, arrival %8.2f ns, raw DMA %8.2f ns", h.name,
                      h.what, static_cast<long long>(n), ns[kIpcq], ns[kArrival], ns[kRaw]);
        ctx.note(line);
      }
    ctx.metrics().set("ipcq_at_least_raw_dma", ordered);
    write_figures(ctx, hops);
  }

 private:
  /// One figure per hop (IPCQ, its arrival alone, and a raw DMA write against the message size), summary.csv and
  /// index.html, from the metrics.
  static void write_figures(BenchContext& ctx, std::span<const Hop> hops) {
    const Metrics& cases = *ctx.metrics().find("cases")->node;
    std::vector<std::pair<std::string, std::string>> figures;
    fig::Table t{"Cases", {"hop", "bytes", "ipcq_ns", "ipcq_arrival_ns", "raw_dma_ns"}, {}};
    for (const Hop& h : hops) {
      fig::LinePlot plot;
      plot.title = std::string("PE-to-PE latency, ") + h.name + " (" + h.what + ")";
      plot.x = {"message size (bytes)", true, std::nullopt, std::nullopt, 4, {}};
      plot.x.format = [](double b) {
        char s[32];
        std::snprintf(s, sizeof s, b >= 1024 ? "%g KB" : "%g B", b >= 1024 ? b / 1024 : b);
        return std::string(s);
      };
      plot.y = {"latency (ns)", true, std::nullopt, std::nullopt, 10, {}};
      fig::Series ipcq, arrival, raw;
      ipcq.name = "IPCQ send + recv";
      arrival.name = "IPCQ arrival only";
      raw.name = "raw DMA write";
      arrival.dashed = raw.dashed = true;
      for (const Metrics::Entry& e : cases.entries()) {
        const Metrics& c = *e.node;
        if (std::get<std::string>(c.find("hop")->scalar) != h.name) continue;
        const double b = c.number("bytes").value_or(0);
        for (auto [s, key] : {std::pair{&ipcq, "ipcq_ns"}, {&arrival, "ipcq_arrival_ns"}, {&raw, "raw_dma_ns"}}) {
          s->x.push_back(b);
          s->y.push_back(c.number(key).value_or(0));
        }
        char v[3][32];
        std::snprintf(v[0], 32, "%.2f", c.number("ipcq_ns").value_or(0));
        std::snprintf(v[1], 32, "%.2f", c.number("ipcq_arrival_ns").value_or(0));
        std::snprintf(v[2], 32, "%.2f", c.number("raw_dma_ns").value_or(0));
        t.rows.push_back({h.name, std::to_string(static_cast<long long>(b)), v[0], v[1], v[2]});
      }
      plot.series = {ipcq, arrival, raw};
      const std::string file = std::string("pe2pe_latency_") + h.name + ".svg";
      ctx.write_file(file, fig::svg(plot));
      figures.emplace_back(file, std::string(h.name) + ": " + h.what + ", IPCQ against a raw DMA write");
    }
    ctx.write_file("summary.csv", fig::csv(t));
    ctx.write_file("index.html", fig::index_html("kbsim PE-to-PE latency", figures, {t}));
  }
};

}  // namespace

void add_pe2pe_latency(PluginDescriptor& plugin) {
  add_bench<Pe2PeLatency>(plugin);
  add_kernel(plugin, "pe2pe-latency", &pe2pe_kernel,
             "pe2pe-latency's kernel: cube 0 pe0 sends to (cube, pe) by IPCQ or a raw DMA write");
}

}  // namespace kbsim::bench_ccl
