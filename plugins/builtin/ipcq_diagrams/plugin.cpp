// ipcq-diagrams (docs/model.md, "IPCQ"): the two IPCQ protocol diagrams of the
// reference (ADR-0023/0025), drawn from one simulated send: sip0.cube0.pe0
// sends `bytes` east to its neighbour sip0.cube1.pe0, which receives them.
//
//   ipcq_send_recv.svg   the protocol: PE_CPU, PE_IPCQ and PE_DMA of both PEs, the fabric as one lifeline
//   ipcq_two_pe_dma.svg  the data movement: the packet hop by hop to the peer's rx slot, the credit back
//
// Nothing is drawn from a formula. The bench steps the simulation one
// picosecond at a time and notes when each component handled the message:
// a link's byte count grows when the node at its start hands it on (a router:
// when the head flit reaches it), the PE_IPCQs' counters grow when they send
// or match a message, the receiver's slot write is its `ipcq_copy` record and
// the kernels mark their calls with tl.phase. Messages of 0 bytes (the
// PE_CPU's calls) are seen only where they are sent and where their answer
// comes back.
#include "kbsim/plugin.hpp"

#include <algorithm>
#include <map>

#include "kbsim/ahbm/names.hpp"
#include "kbsim/figure.hpp"
#include "kbsim/pe/ccl.hpp"
#include "kbsim/pe/kernels.hpp"
#include "kbsim/rt/distributed.hpp"
#include "kbsim/rt/runtime.hpp"
#include "kbsim/tl/tl.hpp"
#include "sequence.hpp"

namespace kbsim::ipcq_diagrams {

namespace {

namespace names = ahbm::names;

constexpr IntParam kBytes{"bytes", 2048, "the message size in bytes"};
constexpr Tick kLimit = 1'000'000'000;  ///< 1 ms of sim time: a send that takes longer is a model error

/// (bytes): cube 0 sends east, cube 1 receives from the west; each marks its call with phases.
void kernel(tl::Program& tl, const tl::Args& a) {
  const Shape shape{a.i64(0)};
  if (tl.program_id(1) == 0) {
    tl::Tensor src = tl.full(shape, 1.0, DType::kU8);
    tl.phase("send");
    tl.send("E", src);
    tl.phase("sent");
  } else {
    tl.phase("recv");
    tl.recv("W", shape, DType::kU8);
    tl.phase("received");
  }
}

/// The first time each watched quantity grew after the launch.
class Watch {
 public:
  Watch(System& sys, std::vector<std::pair<std::string, std::string>> links,
        std::vector<std::pair<std::string, std::string>> stats)
      : sys_(sys), links_(std::move(links)), stats_(std::move(stats)) {
    base_ = sample();
  }
  /// Step until every watched quantity grew (or the limit passed).
  void run() {
    const Tick end = sys_.now() + kLimit;
    std::uint64_t events = sys_.events();
    while (seen_.size() < base_.size() && sys_.now() < end && !sys_.idle()) {
      sys_.run_until(sys_.now() + 1);
      if (sys_.events() == events) continue;
      events = sys_.events();
      const std::vector<std::uint64_t> now = sample();
      for (std::size_t i = 0; i < now.size(); ++i)
        if (now[i] != base_[i] && !seen_.count(i)) seen_.emplace(i, sys_.now());
    }
    if (seen_.size() < base_.size())
      throw BenchError("STUCK", "the send and its credit back were not all seen (" + std::to_string(seen_.size()) +
                                    " of " + std::to_string(base_.size()) + " hand-overs)");
  }
  Tick link(std::size_t i) const { return seen_.at(i); }
  Tick stat(std::size_t i) const { return seen_.at(links_.size() + i); }

 private:
  std::vector<std::uint64_t> sample() const {
    std::vector<std::uint64_t> out(links_.size(), 0);
    for (const LinkUse& u : sys_.link_use())
      for (std::size_t i = 0; i < links_.size(); ++i)
        if (u.src == links_[i].first && u.dst == links_[i].second) out[i] += u.bytes;
    for (const auto& [node, name] : stats_) out.push_back(sys_.stat(node, name).count);
    return out;
  }
  System& sys_;
  std::vector<std::pair<std::string, std::string>> links_, stats_;
  std::vector<std::uint64_t> base_;
  std::map<std::size_t, Tick> seen_;
};

std::vector<std::string> path(System& sys, const std::string& from, const std::string& to) {
  std::vector<std::string> out;
  for (const RouteHop& h : sys.route_info(from, to, "data").hops) out.emplace_back(h.node);
  return out;
}

Tick phase(const rt::LaunchResult& r, unsigned cube, std::string_view name) {
  for (const ahbm::PeResult& p : r.pes)
    if (p.pe.cube == cube)
      for (const auto& [n, t] : p.phases)
        if (n == name) return t;
  throw BenchError("NO_PHASE",
                   "the kernel on cube " + std::to_string(cube) + " did not mark '" + std::string(name) + "'");
}

class IpcqDiagrams final : public Bench {
 public:
  static BenchInfo info() {
    BenchInfo i{"ipcq-diagrams",
                "the IPCQ protocol as two sequence diagrams (send/recv, two-PE DMA), from one simulated send of "
                "sip0.cube0.pe0 to its east neighbour sip0.cube1.pe0",
                {kBytes}};
    i.reads_topology = true;
    i.reads_op_log = true;
    return i;
  }

  void run(BenchContext& ctx) override {
    const std::int64_t n = ctx.params().get(kBytes);
    // The run is watched picosecond by picosecond: a diagram's message stays small.
    ctx.params().check(n >= 1 && n <= (1 << 16), kBytes, "must be in 1..65536");
    System& sys = ctx.configured();
    auto& rt = sys.service<rt::Runtime>();
    ccl::Config cfg = ccl::config(ctx);
    for (ParamEntry& e : cfg.algorithms.at(cfg.algorithm).params.entries())
      if (e.name == ccl::param::kSlotSize.name && std::get<std::int64_t>(e.value) < n) e.value = n;
    sys.service<rt::Distributed>().install_ipcq({{{0, 0, 0}, "E", {0, 1, 0}}, {{0, 1, 0}, "W", {0, 0, 0}}}, cfg);

    const auto part = [](unsigned cube, std::string_view p) { return names::pe_part(0, cube, 0, p); };
    const std::string cpu[2] = {part(0, "pe_cpu"), part(1, "pe_cpu")},
                      ipcq[2] = {part(0, "pe_ipcq"), part(1, "pe_ipcq")},
                      dma[2] = {part(0, "pe_dma"), part(1, "pe_dma")};
    const std::vector<std::string> out = path(sys, dma[0], dma[1]), back = path(sys, dma[1], dma[0]);
    // Watched: every link of both paths (the packet's, then the credit's), then the two internal hand-overs.
    std::vector<std::pair<std::string, std::string>> links;
    for (const auto* p : {&out, &back})
      for (std::size_t k = 0; k + 1 < p->size(); ++k) links.emplace_back((*p)[k], (*p)[k + 1]);
    const std::size_t to_ipcq = links.size();
    links.insert(links.end(), {{dma[1], ipcq[1]}, {ipcq[1], dma[1]}, {dma[0], ipcq[0]}});
    Watch watch(sys, links, {{ipcq[0], "sent"}, {ipcq[1], "received"}, {ipcq[1], "credits"}});

    const Tick t0 = sys.now();
    rt::LaunchOptions opt;
    opt.sip = 0;
    opt.grid_cubes = 2;
    opt.grid_pes = 1;
    const rt::LaunchHandle h = rt.launch("ipcq-diagrams", {n}, opt);
    watch.run();
    const rt::LaunchResult& r = rt.wait(h);
    Tick write_start = 0, write_end = 0;
    if (const OpLogView* log = sys.op_log())
      for (const OpRecord& rec : log->records())
        if (rec.name == "ipcq_copy" && rec.component_id == dma[1] && rec.t_start >= t0)
          write_start = rec.t_start, write_end = rec.t_end;
    if (write_end == 0) throw BenchError("NO_SLOT_WRITE", "the receiver's ipcq_copy record is missing");

    // When each node of a path handled the message: the link leaving it grew (the last node: its hand-over).
    const std::size_t hops_out = out.size() - 1;
    auto at = [&](std::size_t first_link, std::size_t k) { return watch.link(first_link + k); };
    const std::string packet = "IpcqPacket " + std::to_string(n) + " B", credit = "IpcqCredit 16 B";
    const Tick sent = watch.stat(0), matched = watch.stat(1), credited = watch.stat(2);

    // The two-PE DMA path: both PE_IPCQs and every node of both paths a lifeline, in the packet's order (a node
    // only the credit crosses goes next to the one it leaves from).
    Sequence dma_seq{
        "IPCQ two-PE DMA: " + names::pe(0, 0, 0) + " -> " + names::pe(0, 1, 0) + ", " + std::to_string(n) + " B",
        {ipcq[0]},
        {}};
    auto& lines = dma_seq.lifelines;
    lines.insert(lines.end(), out.begin(), out.end());
    lines.push_back(ipcq[1]);
    for (std::size_t k = 1; k < back.size(); ++k)
      if (std::find(lines.begin(), lines.end(), back[k]) == lines.end())
        lines.insert(std::find(lines.begin(), lines.end(), back[k - 1]), back[k]);
    auto line = [&](const std::string& id) {
      return static_cast<std::size_t>(std::find(lines.begin(), lines.end(), id) - lines.begin());
    };
    dma_seq.arrows.push_back({line(ipcq[0]), line(dma[0]), sent, at(0, 0), packet + " (descriptor)"});
    for (std::size_t k = 0; k < hops_out; ++k)
      dma_seq.arrows.push_back(
          {line(out[k]), line(out[k + 1]), at(0, k), k + 1 < hops_out ? at(0, k + 1) : at(to_ipcq, 0), packet});
    dma_seq.arrows.push_back({line(dma[1]), line(ipcq[1]), write_start, write_end, "rx slot written (ipcq_copy)"});
    dma_seq.arrows.push_back({line(ipcq[1]), line(dma[1]), credited, at(hops_out, 0), credit});
    for (std::size_t k = 0; k + 1 < back.size(); ++k)
      dma_seq.arrows.push_back({line(back[k]), line(back[k + 1]), at(hops_out, k),
                                k + 2 < back.size() ? at(hops_out, k + 1) : at(to_ipcq, 2), credit});
    dma_seq.arrows.push_back({line(dma[0]), line(ipcq[0]), at(to_ipcq, 2), at(to_ipcq, 2), credit + " (handed over)"});

    // The protocol: the fabric as one lifeline.
    Sequence proto{"IPCQ send/recv: " + names::pe(0, 0, 0) + " tl.send(E) -> " + names::pe(0, 1, 0) + " tl.recv(W), " +
                       std::to_string(n) + " B",
                   {cpu[0], ipcq[0], dma[0], "fabric", dma[1], ipcq[1], cpu[1]},
                   {}};
    const Tick last_out = at(0, hops_out - 1), last_back = at(hops_out, back.size() - 2);
    proto.arrows = {
        {0, 1, phase(r, 0, "send"), sent, "IpcqCall send"},
        {1, 2, sent, at(0, 0), packet},
        {1, 0, sent, phase(r, 0, "sent"), "send returns"},
        {6, 5, phase(r, 1, "recv"), phase(r, 1, "recv"), "IpcqCall recv (waits)"},
        {2, 3, at(0, 0), hops_out > 1 ? at(0, 1) : at(to_ipcq, 0), packet},
        {3, 4, last_out, at(to_ipcq, 0), packet},
        {4, 5, write_start, write_end, "slot written, arrival"},
        {5, 4, credited, at(hops_out, 0), credit},
        {4, 3, at(hops_out, 0), back.size() > 2 ? at(hops_out, 1) : at(to_ipcq, 2), credit},
        {3, 2, last_back, at(to_ipcq, 2), credit},
        {2, 1, at(to_ipcq, 2), at(to_ipcq, 2), credit + " (handed over)"},
        {5, 6, credited, phase(r, 1, "received"), "recv returns"},
    };
    for (Sequence* s : {&proto, &dma_seq})
      std::stable_sort(s->arrows.begin(), s->arrows.end(),
                       [](const Arrow& a, const Arrow& b) { return a.t_from < b.t_from; });

    Metrics& m = ctx.metrics();
    m.set("bytes", n);
    m.set("recv_matched_ns", ticks_to_ns(matched));  // the arrival met the waiting recv
    for (const auto& [key, s] : {std::pair{"send_recv", &proto}, {"two_pe_dma", &dma_seq}}) {
      Metrics& list = m.list(key);
      for (const Arrow& a : s->arrows) {
        Metrics& e = list.append();
        e.set("from", s->lifelines[a.from]);
        e.set("to", s->lifelines[a.to]);
        e.set("message", a.label);
        e.set("t_from_ns", ticks_to_ns(a.t_from));
        e.set("t_to_ns", ticks_to_ns(a.t_to));
      }
    }
    ctx.write_file("ipcq_send_recv.svg", svg(proto));
    ctx.write_file("ipcq_two_pe_dma.svg", svg(dma_seq));
    ctx.write_file("index.html",
                   fig::index_html("kbsim IPCQ protocol",
                                   {{"ipcq_send_recv.svg", "send/recv: the protocol, as simulated"},
                                    {"ipcq_two_pe_dma.svg", "two-PE DMA: the packet hop by hop, the credit back"}},
                                   {}));
    ctx.note("send " + ns_text(phase(r, 0, "send")) + " ns, slot written " + ns_text(write_end) + " ns, recv returns " +
             ns_text(phase(r, 1, "received")) + " ns");
  }
};

}  // namespace

}  // namespace kbsim::ipcq_diagrams

KBSIM_PLUGIN("ipcq_diagrams") {
  kbsim::add_bench<kbsim::ipcq_diagrams::IpcqDiagrams>(plugin);
  kbsim::add_kernel(plugin, "ipcq-diagrams", &kbsim::ipcq_diagrams::kernel,
                    "ipcq-diagrams' kernel: cube 0 pe0 sends east, cube 1 pe0 receives from the west");
}
