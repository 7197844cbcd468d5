// tree_allreduce (see tree.cpp): the algorithm's declaration, shared by the
// plugin and its test.
#pragma once

#include "kbsim/pe/ccl.hpp"
#include "kbsim/tl/tl.hpp"

namespace tree {

namespace ccl = kbsim::ccl;

/// The kernel's own argument, after the runtime's (tensor, rank, world, n_elem).
struct TreeArgs {
  std::int64_t cubes = 1;  ///< cubes per rank
  static constexpr auto fields = std::make_tuple(&TreeArgs::cubes);
};

void kernel(kbsim::tl::Program& tl, const kbsim::tl::Args& args);

class TreeAllreduce final : public ccl::Algorithm {
 public:
  static kbsim::ccl::AlgorithmInfo info() {
    return {"tree_allreduce",
            "binary tree over pe0 of every cube of every rank: reduce up to rank 0's cube 0, broadcast down",
            {},
            {},
            {}};
  }
  std::vector<ccl::Wire> wiring(const ccl::Setup& s) const override {
    const unsigned cubes = s.system.cubes(), members = s.world_size * cubes;
    auto pe = [&](unsigned m) { return ccl::PeRef{m / cubes, m % cubes, 0}; };
    std::vector<ccl::Wire> w;
    for (unsigned m = 1; m < members; ++m) {
      const unsigned parent = (m - 1) / 2;
      w.push_back({pe(m), "parent", pe(parent)});
      w.push_back({pe(parent), m % 2 ? "child0" : "child1", pe(m)});
    }
    return w;
  }
  ccl::Launch launch(const ccl::Collective& c) const override {
    if (c.cube_w * c.cube_h != c.setup.system.cubes())
      throw kbsim::BenchError("NOT_SUPPORTED", "tree_allreduce needs a shard on every cube's pe0");
    return {"tree-allreduce", c.cube_w * c.cube_h, 1, ccl::pack(TreeArgs{c.setup.system.cubes()})};
  }
  std::uint64_t min_slot_size(const ccl::Collective& c) const override {
    return c.n_elem * kbsim::dtype_size(c.dtype);  // a whole shard per message
  }
};

}  // namespace tree
