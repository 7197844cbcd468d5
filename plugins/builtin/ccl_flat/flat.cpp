// Two flat allreduce algorithms over pe0 of every cube of every rank
// (docs/model.md, "Collectives"), to compare against the hierarchical one.
// Both are a reduce-scatter followed by an all-gather over R = ranks x cubes
// members: the shard of n elements is cut into R chunks (chunk c covers
// elements [c*n/R, (c+1)*n/R)), and a chunk travels in pieces of at most one
// slot. Every receive is posted (recv_async) before the step's sends, so the
// queues drain as messages arrive and up to n_slots pieces are in flight per
// direction: the pieces of a chunk are pipelined over the slots.
//
//   ring_allreduce    members on a ring (a serpentine through each SIP's cube
//                     mesh, SIP after SIP); 2(R-1) steps, each sending one chunk
//                     to `next` and receiving one from `prev`
//   direct_allreduce  every member talks to every other one: it sends chunk j
//                     to member j and adds the R-1 chunks it receives, then
//                     sends its reduced chunk to all; 2 steps, R-1 peers each
#include <algorithm>

#include "kbsim/pe/ccl.hpp"
#include "kbsim/pe/kernels.hpp"
#include "kbsim/plugin.hpp"
#include "kbsim/tl/tl.hpp"

namespace {

namespace tl = kbsim::tl;
namespace ccl = kbsim::ccl;

/// A member's place in the serpentine order of its SIP's cube mesh.
unsigned serpentine(unsigned cube, unsigned w) {
  const unsigned x = cube % w, y = cube / w;
  return y * w + (y % 2 ? w - 1 - x : x);
}
unsigned cube_at(unsigned pos, unsigned w) {
  const unsigned y = pos / w, k = pos % w;
  return y * w + (y % 2 ? w - 1 - k : k);
}

/// The kernels' own arguments (after the runtime's tensor, rank, world and n_elem).
struct FlatArgs {
  std::int64_t cube_w = 1, cube_h = 1;  ///< the cube grid the shards cover
  std::int64_t slot_size = 0;           ///< bytes per IPCQ slot: a message's most
  static constexpr auto fields = std::make_tuple(&FlatArgs::cube_w, &FlatArgs::cube_h, &FlatArgs::slot_size);
};

/// The pieces of one chunk: (first element, elements).
struct Piece {
  std::int64_t first, n;
};

class Flat {
 public:
  Flat(tl::Program& tl, const tl::Args& args) : Flat(tl, ccl::KernelArgs<FlatArgs>(args)) {}
  Flat(tl::Program& tl, const ccl::KernelArgs<FlatArgs>& a) : tl_(tl), t_(a.tensor) {
    rank_ = a.rank;
    world_ = a.world;
    n_ = a.n_elem;
    cube_w_ = static_cast<unsigned>(a.own.cube_w);
    cube_h_ = static_cast<unsigned>(a.own.cube_h);
    slot_elems_ = std::max<std::int64_t>(1, a.own.slot_size / static_cast<std::int64_t>(kbsim::dtype_size(t_.dtype)));
    cube_ = static_cast<unsigned>(tl.program_id(1));
    shard_ = t_.shard(cube_, 0);
    if (!shard_) throw tl::Error("the tensor has no shard on cube " + std::to_string(cube_) + " pe0");
    const unsigned cubes = cube_w_ * cube_h_;
    members_ = world_ * cubes;
    me_ = rank_ * cubes + serpentine(cube_, cube_w_);
  }
  unsigned me() const { return me_; }
  unsigned members() const { return members_; }
  /// The member index of `m` as a direction name (direct_allreduce).
  static std::string dir_to(unsigned m) { return "m" + std::to_string(m); }

  std::vector<Piece> pieces(unsigned chunk) const {
    const std::int64_t lo = n_ * chunk / members_, hi = n_ * (chunk + 1) / members_;
    std::vector<Piece> out;
    for (std::int64_t at = lo; at < hi; at += slot_elems_) out.push_back({at, std::min(slot_elems_, hi - at)});
    return out;
  }
  tl::Tensor load(const Piece& p) { return tl_.load(addr(p), {p.n}, t_.dtype); }
  void store(const Piece& p, const tl::Tensor& v) { tl_.store(addr(p), v); }
  std::vector<tl::RecvFuture> post(std::string_view dir, const std::vector<Piece>& ps) {
    std::vector<tl::RecvFuture> f;
    for (const Piece& p : ps) f.push_back(tl_.recv_async(dir, {p.n}, t_.dtype));
    return f;
  }
  tl::Program& tl() { return tl_; }

 private:
  std::uint64_t addr(const Piece& p) const {
    return shard_->ptr + static_cast<std::uint64_t>(p.first) * kbsim::dtype_size(t_.dtype);
  }
  tl::Program& tl_;
  const tl::TensorArg& t_;
  const tl::TensorArg::Shard* shard_ = nullptr;
  unsigned rank_ = 0, world_ = 1, cube_w_ = 1, cube_h_ = 1, cube_ = 0, members_ = 1, me_ = 0;
  std::int64_t n_ = 0, slot_elems_ = 1;
};

void ring_kernel(tl::Program& tl, const tl::Args& args) {
  if (tl.program_id(0) != 0) return;
  Flat f(tl, args);
  const unsigned R = f.members(), me = f.me();
  if (R < 2) return;
  auto chunk = [&](std::int64_t k) { return static_cast<unsigned>(((k % R) + R) % R); };
  // Reduce-scatter: at step s, send chunk me-s (own values at s = 0), receive chunk me-s-1 and add own.
  tl.phase("reduce_scatter");
  std::vector<tl::Tensor> out;
  for (const Piece& p : f.pieces(me)) out.push_back(f.load(p));
  for (unsigned s = 0; s + 1 < R; ++s) {
    const std::vector<Piece> in = f.pieces(chunk(std::int64_t{me} - s - 1));
    std::vector<tl::RecvFuture> fut = f.post("prev", in);
    for (const tl::Tensor& v : out) tl.send("next", v);
    out.clear();
    for (std::size_t k = 0; k < in.size(); ++k) {
      // The piece's arrival, then own values: two calls in this order (as operands of + their order would be the
      // compiler's, and so would the timing).
      const tl::Tensor got = tl.wait(fut[k]);
      out.push_back(f.load(in[k]) + got);
    }
  }
  // out = chunk me+1, fully reduced. All-gather: pass the reduced chunks around.
  tl.phase("all_gather");
  const std::vector<Piece> mine = f.pieces(chunk(std::int64_t{me} + 1));
  for (std::size_t k = 0; k < mine.size(); ++k) f.store(mine[k], out[k]);
  for (unsigned s = 0; s + 1 < R; ++s) {
    const std::vector<Piece> in = f.pieces(chunk(std::int64_t{me} - s));
    std::vector<tl::RecvFuture> fut = f.post("prev", in);
    for (const tl::Tensor& v : out) tl.send("next", v);
    out.clear();
    for (std::size_t k = 0; k < in.size(); ++k) {
      out.push_back(tl.wait(fut[k]));
      f.store(in[k], out.back());
    }
  }
}

void direct_kernel(tl::Program& tl, const tl::Args& args) {
  if (tl.program_id(0) != 0) return;
  Flat f(tl, args);
  const unsigned R = f.members(), me = f.me();
  if (R < 2) return;
  // Reduce-scatter: everyone sends chunk j to member j and adds what arrives for its own chunk.
  tl.phase("reduce_scatter");
  const std::vector<Piece> mine = f.pieces(me);
  std::vector<std::vector<tl::RecvFuture>> fut(R);
  for (unsigned j = 0; j < R; ++j)
    if (j != me) fut[j] = f.post(Flat::dir_to(j), mine);
  for (unsigned j = 0; j < R; ++j)
    if (j != me)
      for (const Piece& p : f.pieces(j)) tl.send(Flat::dir_to(j), f.load(p));
  std::vector<tl::Tensor> acc;
  for (const Piece& p : mine) acc.push_back(f.load(p));
  for (unsigned j = 0; j < R; ++j)
    if (j != me)
      for (std::size_t k = 0; k < mine.size(); ++k) acc[k] = acc[k] + tl.wait(fut[j][k]);
  // All-gather: everyone sends its reduced chunk to all and stores the others'.
  tl.phase("all_gather");
  for (unsigned j = 0; j < R; ++j)
    if (j != me) fut[j] = f.post(Flat::dir_to(j), f.pieces(j));
  for (unsigned j = 0; j < R; ++j)
    if (j != me)
      for (const tl::Tensor& v : acc) tl.send(Flat::dir_to(j), v);
  for (std::size_t k = 0; k < mine.size(); ++k) f.store(mine[k], acc[k]);
  for (unsigned j = 0; j < R; ++j)
    if (j != me) {
      const std::vector<Piece> theirs = f.pieces(j);
      for (std::size_t k = 0; k < theirs.size(); ++k) f.store(theirs[k], tl.wait(fut[j][k]));
    }
}

/// The members (pe0 of each cube of each rank) in ring order.
std::vector<ccl::PeRef> members(const ccl::Setup& s) {
  std::vector<ccl::PeRef> m;
  const unsigned cubes = s.system.cubes();
  for (unsigned r = 0; r < s.world_size; ++r)
    for (unsigned k = 0; k < cubes; ++k) m.push_back({r, cube_at(k, s.system.cube_w), 0});
  return m;
}

ccl::Launch flat_launch(const char* kernel, const ccl::Collective& c) {
  if (c.cube_w * c.cube_h != c.setup.system.cubes())
    throw kbsim::BenchError("NOT_SUPPORTED", std::string(kernel) +
                                                 ": the tensor must have a shard on every cube's pe0 (the wiring "
                                                 "covers every cube)");
  return {kernel, c.cube_w * c.cube_h, 1,
          ccl::pack(FlatArgs{c.cube_w, c.cube_h, c.setup.params.get(kbsim::ccl::param::kSlotSize)})};
}

class Ring final : public ccl::Algorithm {
 public:
  static kbsim::ccl::AlgorithmInfo info() {
    return {"ring_allreduce",
            "reduce-scatter + all-gather on a ring through pe0 of every cube (serpentine per SIP, SIP after SIP); "
            "chunks pipelined over the slots",
            {},
            {},
            {}};
  }
  std::vector<ccl::Wire> wiring(const ccl::Setup& s) const override {
    const std::vector<ccl::PeRef> m = members(s);
    std::vector<ccl::Wire> w;
    if (m.size() < 2) return w;
    for (std::size_t i = 0; i < m.size(); ++i) {
      w.push_back({m[i], "next", m[(i + 1) % m.size()]});
      w.push_back({m[i], "prev", m[(i + m.size() - 1) % m.size()]});
    }
    return w;
  }
  ccl::Launch launch(const ccl::Collective& c) const override { return flat_launch("ring-allreduce", c); }
};

class Direct final : public ccl::Algorithm {
 public:
  static kbsim::ccl::AlgorithmInfo info() {
    return {"direct_allreduce",
            "reduce-scatter + all-gather where pe0 of every cube exchanges with every other one directly "
            "(one queue per pair; two steps)",
            {},
            {},
            {}};
  }
  std::vector<ccl::Wire> wiring(const ccl::Setup& s) const override {
    const std::vector<ccl::PeRef> m = members(s);
    const unsigned cubes = s.system.cubes();
    std::vector<ccl::Wire> w;
    for (std::size_t i = 0; i < m.size(); ++i)
      for (std::size_t j = 0; j < m.size(); ++j)
        if (i != j) {
          // Members are numbered rank * cubes + serpentine position, as the kernel numbers them.
          const unsigned mj = m[j].sip * cubes + serpentine(m[j].cube, s.system.cube_w);
          w.push_back({m[i], Flat::dir_to(mj), m[j]});
        }
    return w;
  }
  ccl::Launch launch(const ccl::Collective& c) const override { return flat_launch("direct-allreduce", c); }
};

}  // namespace

KBSIM_PLUGIN("ccl_flat") {
  kbsim::ccl::add_algorithm<Ring>(plugin);
  kbsim::ccl::add_algorithm<Direct>(plugin);
  kbsim::add_kernel(plugin, "ring-allreduce", &ring_kernel,
                    "ring_allreduce's kernel: (tensor, rank, world, n_elem, cube_w, cube_h, slot_size)");
  kbsim::add_kernel(plugin, "direct-allreduce", &direct_kernel,
                    "direct_allreduce's kernel: (tensor, rank, world, n_elem, cube_w, cube_h, slot_size)");
}
