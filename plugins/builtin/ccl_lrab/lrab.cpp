// lrab_hierarchical_allreduce: the reference's collective (docs/model.md,
// "Collectives"). "Local reduce to a root and broadcast": pe0 of every cube
// holds one shard; inside each SIP the shards are reduced to the root cube
// (center (h//2)*w + w//2 by default; `root: corner` picks the south-east
// cube), the roots of all SIPs exchange over the SIP topology, and the sum is
// broadcast back. Five phases, every SIP at once:
//   1 row reduce towards the root column (west part eastwards, east part westwards)
//   2 column reduce on the root column towards the root row
//   3 inter-SIP exchange at the root cube: ring_1d passes along the ring
//     (world - 1 rounds of send global_E / recv global_W); torus_2d does that
//     along each row, then each column; mesh_2d_no_wrap reduces along a chain
//     and broadcasts back, per dimension
//   4 column broadcast from the root row, 5 row broadcast from the root column.
// One message per hop carries the whole shard (no chunk pipelining), so the
// IPCQ slot must hold a shard.
#include "lrab.hpp"

#include "kbsim/pe/ccl.hpp"
#include "kbsim/pe/kernels.hpp"
#include "kbsim/plugin.hpp"
#include "kbsim/tl/tl.hpp"

namespace {

namespace tl = kbsim::tl;
namespace ccl = kbsim::ccl;

using Args = ccl::KernelArgs<kbsim::ccl_lrab::LrabArgs>;

class Reducer {
 public:
  Reducer(tl::Program& tl, tl::Tensor acc) : tl_(tl), acc_(std::move(acc)) {}
  tl::Tensor& acc() { return acc_; }
  void add_from(std::string_view dir) { acc_ = acc_ + recv(dir); }
  void send(std::string_view dir) { tl_.send(dir, acc_); }
  void take_from(std::string_view dir) { acc_ = recv(dir); }

  /// Pass-along ring over `n` members: n-1 rounds of sending what came last and adding what arrives.
  void ring(unsigned n, std::string_view out, std::string_view in) {
    tl::Tensor cur = acc_;
    for (unsigned k = 1; k < n; ++k) {
      tl_.send(out, cur);
      cur = recv(in);
      acc_ = acc_ + cur;
    }
  }
  /// Chain reduce towards position 0 of `n` members, then broadcast back (no wrap).
  void chain(unsigned pos, unsigned n, std::string_view towards, std::string_view away) {
    if (n < 2) return;
    if (pos + 1 < n) add_from(away);
    if (pos > 0) {
      send(towards);
      take_from(towards);
    }
    if (pos + 1 < n) send(away);
  }

 private:
  tl::Tensor recv(std::string_view dir) { return tl_.recv(dir, acc_.shape(), acc_.dtype()); }
  tl::Program& tl_;
  tl::Tensor acc_;
};

void inter_sip(Reducer& r, const Args& a) {
  if (a.world < 2) return;
  const auto w = static_cast<unsigned>(a.own.sip_w), h = static_cast<unsigned>(a.own.sip_h);
  switch (static_cast<ccl::SipTopology>(a.own.topology)) {
    case ccl::SipTopology::kRing1d: return r.ring(a.world, "global_E", "global_W");
    case ccl::SipTopology::kTorus2d: r.ring(w, "global_E", "global_W"); return r.ring(h, "global_S", "global_N");
    case ccl::SipTopology::kMesh2dNoWrap:
      r.chain(a.rank % w, w, "global_W", "global_E");
      return r.chain(a.rank / w, h, "global_N", "global_S");
  }
  throw tl::Error("lrab: unsupported SIP topology kind " + std::to_string(a.own.topology));
}

void lrab_kernel(tl::Program& tl, const tl::Args& args) {
  const Args a(args);
  const auto cw = static_cast<unsigned>(a.own.cube_w), ch = static_cast<unsigned>(a.own.cube_h);
  const bool corner = a.own.corner != 0;
  if (tl.program_id(0) != 0) return;  // pe0 of each cube
  const auto cube = static_cast<unsigned>(tl.program_id(1));
  const tl::TensorArg::Shard* shard = a.tensor.shard(cube, 0);
  if (!shard) throw tl::Error("lrab: the tensor has no shard on cube " + std::to_string(cube) + " pe0");
  const unsigned x = cube % cw, y = cube / cw;
  const unsigned rc = corner ? cw - 1 : cw / 2, rr = corner ? ch - 1 : ch / 2;
  Reducer r(tl, tl.load(shard->ptr, {a.n_elem}, a.tensor.dtype));

  tl.phase("row_reduce");
  if (x < rc) {
    if (x > 0) r.add_from("W");
    r.send("E");
  } else if (x > rc) {
    if (x + 1 < cw) r.add_from("E");
    r.send("W");
  } else {
    if (x > 0) r.add_from("W");
    if (x + 1 < cw) r.add_from("E");
    tl.phase("column_reduce");
    if (y < rr) {
      if (y > 0) r.add_from("N");
      r.send("S");
    } else if (y > rr) {
      if (y + 1 < ch) r.add_from("S");
      r.send("N");
    } else {
      if (y > 0) r.add_from("N");
      if (y + 1 < ch) r.add_from("S");
      tl.phase("inter_sip");
      inter_sip(r, a);
    }
    tl.phase("column_broadcast");
    if (y < rr) r.take_from("S");
    if (y > rr) r.take_from("N");
    if (y > 0 && y <= rr) r.send("N");
    if (y + 1 < ch && y >= rr) r.send("S");
  }
  tl.phase("row_broadcast");
  if (x < rc) r.take_from("E");
  if (x > rc) r.take_from("W");
  if (x > 0 && x <= rc) r.send("W");
  if (x + 1 < cw && x >= rc) r.send("E");
  tl.phase("store");
  tl.store(shard->ptr, r.acc());
}

}  // namespace

namespace kbsim::ccl_lrab {

ccl::AlgorithmInfo Lrab::info() {
  return {"lrab_hierarchical_allreduce",
          "the reference's allreduce: pe0 of each cube reduces to a root cube per SIP (rows, then the root "
          "column), the roots exchange over the SIP topology, then the sum is broadcast back; one message per hop",
          {kRoot},
          {"ring_1d", "torus_2d", "mesh_2d_no_wrap"},
          {"tcm", "sram", "hbm"}};
}

std::vector<ccl::Wire> Lrab::wiring(const ccl::Setup& s) const {
  s.params.check(root(s.params) >= 0, kRoot, "must be center or corner, got '" + s.params.get(kRoot) + "'");
  std::vector<ccl::Wire> w;
  const unsigned cw = s.system.cube_w, ch = s.system.cube_h;
  for (unsigned sip = 0; sip < s.world_size; ++sip)
    for (unsigned c = 0; c < cw * ch; ++c) {
      const unsigned x = c % cw, y = c / cw;
      auto to = [&](const char* dir, unsigned peer) { w.push_back({{sip, c, 0}, dir, {sip, peer, 0}}); };
      if (y > 0) to("N", c - cw);
      if (y + 1 < ch) to("S", c + cw);
      if (x + 1 < cw) to("E", c + 1);
      if (x > 0) to("W", c - 1);
      for (const auto& [dir, peer] : ccl::sip_neighbors(s.system, s.world_size, sip))
        w.push_back({{sip, c, 0}, dir, {peer, c, 0}});
    }
  return w;
}

std::uint64_t Lrab::min_slot_size(const ccl::Collective& c) const {
  return c.n_elem * dtype_size(c.dtype);  // one shard per message
}

ccl::Launch Lrab::launch(const ccl::Collective& c) const {
  const ccl::SystemShape& s = c.setup.system;
  const bool ring = s.topology == ccl::SipTopology::kRing1d;
  return {"lrab-allreduce", c.cube_w * c.cube_h, 1,
          ccl::pack(LrabArgs{c.cube_w, c.cube_h, static_cast<int>(s.topology), ring ? 0 : s.sip_w, ring ? 0 : s.sip_h,
                             root(c.setup.params) == 1})};
}

int Lrab::root(const Params& p) {
  const std::string& r = p.get(kRoot);
  return r == "center" ? 0 : r == "corner" ? 1 : -1;
}

}  // namespace kbsim::ccl_lrab

KBSIM_PLUGIN("ccl_lrab") {
  kbsim::ccl::add_algorithm<kbsim::ccl_lrab::Lrab>(plugin);
  kbsim::add_kernel(plugin, "lrab-allreduce", &lrab_kernel,
                    "lrab_hierarchical_allreduce's kernel: (tensor, rank, world, n_elem, cube_w, cube_h, sip "
                    "topology, sip_w, sip_h, corner root)");
}
