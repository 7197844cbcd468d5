// The mesh attention kernels (docs/evaluations.md, "GQA attention"): one
// attention of a GQA group (the query heads that share one KV head) whose KV
// sequence is split over n ranks joined in an IPCQ ring ("next" -> "prev").
//
//   attention-mesh-kv   prefill: each rank holds a block of query rows and a
//                       block of K and V; the K/V blocks rotate around the
//                       ring, and each rank folds every block into its rows
//                       with an online softmax (m, l, o). 2 GEMMs per block.
//   attention-mesh-mlo  decode: each rank holds every query row and its K/V
//                       block, computes its partial (m, l, o) with 2 GEMMs,
//                       then the partials rotate around the ring and each
//                       rank merges all of them (no GEMM), so every rank ends
//                       with the whole result: exactly 2 GEMMs per rank.
//
// Arguments: Q, K, V, O (tensors), n_ranks, rank_axis, scale. rank_axis 0:
// the ranks are the PEs of one cube (rank = program_id(0)); 1: the ranks are
// cubes and only each cube's pe0 takes part (rank = program_id(1)).
#include "kbsim/pe/kernels.hpp"

#include "kbsim/plugin.hpp"

namespace kbsim::attention {

namespace {

namespace tl = kbsim::tl;

struct Rank {
  int rank = -1, n = 0;
  unsigned cube = 0, pe = 0;
};

Rank rank_of(tl::Program& tl, const tl::Args& a) {
  const std::int64_t axis = a.i64(5);
  if (axis != 0 && axis != 1) throw tl::Error("rank_axis must be 0 (PEs of a cube) or 1 (cubes, pe0 only)");
  Rank r;
  r.n = static_cast<int>(a.i64(4));
  r.cube = static_cast<unsigned>(tl.program_id(1));
  r.pe = static_cast<unsigned>(tl.program_id(0));
  if (axis == 1 && r.pe != 0) return r;  // the cube-level ring: only pe0 has neighbours
  r.rank = axis == 0 ? tl.program_id(0) : tl.program_id(1);
  if (r.rank >= r.n) r.rank = -1;  // a PE beyond the ring has nothing to do
  return r;
}

const tl::TensorArg::Shard& shard(const tl::Args& a, std::size_t i, const Rank& r, const char* what) {
  const tl::TensorArg::Shard* s = a.tensor(i).shard(r.cube, r.pe);
  if (!s)
    throw tl::Error(std::string(what) + " has no shard on cube " + std::to_string(r.cube) + " pe " +
                    std::to_string(r.pe));
  return *s;
}

tl::Tensor load(tl::Program& tl, const tl::TensorArg::Shard& s) { return tl.load(s.ptr, s.shape, DType::kF16); }

/// Scores of q against a K block: q x K^T x scale.
tl::Tensor scores(tl::Program& tl, const tl::Tensor& q, const tl::Tensor& k, const tl::Tensor& scale) {
  return tl.dot(q, tl.trans(k)) * scale;
}

void mesh_kv(tl::Program& tl, const tl::Args& a) {
  const Rank r = rank_of(tl, a);
  if (r.rank < 0) return;
  const auto &qs = shard(a, 0, r, "Q"), &ks = shard(a, 1, r, "K"), &vs = shard(a, 2, r, "V"), &os = shard(a, 3, r, "O");
  tl.phase("load");
  const tl::Tensor q = load(tl, qs), scale = tl.full({1, 1}, a.f64(6));
  tl::Tensor k = load(tl, ks), v = load(tl, vs), m, l, o;
  for (int step = 0; step < r.n; ++step) {
    tl.phase("attend");
    const tl::Tensor s = scores(tl, q, k, scale);
    const tl::Tensor m_blk = tl.max(s, 1);
    if (step == 0) {
      m = m_blk;
      const tl::Tensor p = tl.exp(s - m);
      l = tl.sum(p, 1);
      o = tl.dot(p, v);
    } else {  // online softmax: rescale what was folded so far to the new running maximum
      const tl::Tensor m_new = tl.maximum(m, m_blk);
      const tl::Tensor alpha = tl.exp(m - m_new);
      const tl::Tensor p = tl.exp(s - m_new);
      l = l * alpha + tl.sum(p, 1);
      o = o * alpha + tl.dot(p, v);
      m = m_new;
    }
    if (step + 1 == r.n) break;
    tl.phase("rotate");
    tl.send("next", k);
    tl.send("next", v);
    k = tl.recv("prev", ks.shape);
    v = tl.recv("prev", vs.shape);
  }
  tl.phase("store");
  tl.store(os.ptr, o / l);
}

void mesh_mlo(tl::Program& tl, const tl::Args& a) {
  const Rank r = rank_of(tl, a);
  if (r.rank < 0) return;
  const auto &qs = shard(a, 0, r, "Q"), &ks = shard(a, 1, r, "K"), &vs = shard(a, 2, r, "V"), &os = shard(a, 3, r, "O");
  tl.phase("partial");
  const tl::Tensor q = load(tl, qs), k = load(tl, ks), v = load(tl, vs), scale = tl.full({1, 1}, a.f64(6));
  const tl::Tensor s = scores(tl, q, k, scale);
  tl::Tensor m = tl.max(s, 1);
  const tl::Tensor p = tl.exp(s - m);
  tl::Tensor l = tl.sum(p, 1), o = tl.dot(p, v);
  // Rotate the partials: at each step pass on the one received last (own first) and merge the one received.
  const Shape col{qs.shape.rows(), 1};
  tl::Tensor pm = m, pl = l, po = o;
  for (int step = 1; step < r.n; ++step) {
    tl.phase("merge");
    tl.send("next", pm);
    tl.send("next", pl);
    tl.send("next", po);
    pm = tl.recv("prev", col);
    pl = tl.recv("prev", col);
    po = tl.recv("prev", qs.shape);
    const tl::Tensor m_new = tl.maximum(m, pm);
    const tl::Tensor a_own = tl.exp(m - m_new), a_in = tl.exp(pm - m_new);
    l = l * a_own + pl * a_in;
    o = o * a_own + po * a_in;
    m = m_new;
  }
  tl.phase("store");
  tl.store(os.ptr, o / l);
}

}  // namespace

void add_kernels(PluginDescriptor& plugin) {
  add_kernel(plugin, "attention-mesh-kv", &mesh_kv,
             "prefill attention over an IPCQ ring: K/V blocks rotate, online softmax (args Q, K, V, O, n_ranks, "
             "rank_axis, scale)");
  add_kernel(plugin, "attention-mesh-mlo", &mesh_mlo,
             "decode attention over an IPCQ ring: partial (m, l, o) per rank, merged around the ring (args Q, K, V, "
             "O, n_ranks, rank_axis, scale)");
}

}  // namespace kbsim::attention
