// tree_allreduce: a CCL algorithm built outside the kbsim tree, against the
// installed SDK only, and loaded with --plugins. pe0 of every cube of every
// rank is a member of one binary tree (member i = rank x cubes + cube; its
// parent is (i - 1) / 2, its children 2i + 1 and 2i + 2): each member adds
// what its children send, passes the sum to its parent, and the root's total
// comes back down the same edges.
#include "tree.hpp"

#include "kbsim/pe/kernels.hpp"
#include "kbsim/plugin.hpp"

namespace tree {

namespace tl = kbsim::tl;

void kernel(tl::Program& tl, const tl::Args& args) {
  if (tl.program_id(0) != 0) return;
  const ccl::KernelArgs<TreeArgs> a(args);
  const auto cube = static_cast<unsigned>(tl.program_id(1));
  const std::int64_t n = a.n_elem, cubes = a.own.cubes;
  const std::int64_t me = a.rank * cubes + cube, members = a.world * cubes;
  const tl::TensorArg::Shard* s = a.tensor.shard(cube, 0);
  tl.phase("reduce");
  tl::Tensor acc = tl.load(s->ptr, {n}, a.tensor.dtype);
  for (const char* child : {"child0", "child1"})
    if (2 * me + (child[5] == '0' ? 1 : 2) < members) acc = acc + tl.recv(child, {n}, acc.dtype());
  tl.phase("broadcast");
  if (me > 0) {
    tl.send("parent", acc);
    acc = tl.recv("parent", {n}, acc.dtype());
  }
  for (const char* child : {"child0", "child1"})
    if (2 * me + (child[5] == '0' ? 1 : 2) < members) tl.send(child, acc);
  tl.store(s->ptr, acc);
}

}  // namespace tree

KBSIM_PLUGIN("tree_allreduce") {
  kbsim::ccl::add_algorithm<tree::TreeAllreduce>(plugin);
  kbsim::add_kernel(plugin, "tree-allreduce", &tree::kernel, "tree_allreduce's kernel");
}
