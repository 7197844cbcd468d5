// The tile plan generators (docs/model.md, "Commands and tiles") on their own:
// tile counts, stage sequences, pinning, epilogues, addresses and byte counts.
#include <gtest/gtest.h>

#include <vector>

#include "kbsim/pe/plan.hpp"

namespace kbsim::pe {
namespace {

using enum StageType;

std::vector<StageType> types(const TilePlan& t) {
  std::vector<StageType> out;
  for (const Stage& s : t.stages) out.push_back(s.type);
  return out;
}

std::size_t count(const std::vector<TilePlan>& plan, StageType type) {
  std::size_t n = 0;
  for (const TilePlan& t : plan)
    for (const Stage& s : t.stages) n += s.type == type;
  return n;
}

GemmPlanSpec gemm(std::uint64_t m, std::uint64_t k, std::uint64_t n) {
  GemmPlanSpec s;
  s.m = m;
  s.k = k;
  s.n = n;
  s.a_addr = 0x10000;
  s.b_addr = 0x200000;
  s.out_addr = 0x3000000;
  return s;
}

TEST(TilePlan, GemmOf512CubedHas16x8x16TilesWithDefaultTiles) {
  std::vector<TilePlan> plan = gemm_plan(gemm(512, 512, 512));
  EXPECT_EQ(plan.size(), 2048u);  // M 512/32 = 16, K 512/64 = 8, N 512/32 = 16
  EXPECT_EQ(count(plan, kGemm), 2048u);
  EXPECT_EQ(count(plan, kFetch), 2048u);
  EXPECT_EQ(count(plan, kDmaRead), 2 * 2048u);
  EXPECT_EQ(count(plan, kDmaWrite), 16u * 16u) << "one write per output tile: M_tiles x N_tiles";
  EXPECT_EQ(count(plan, kStore), 16u * 16u);
}

TEST(TilePlan, OnlyTheLastKTileStoresAndWritesBack) {
  std::vector<TilePlan> plan = gemm_plan(gemm(64, 256, 64));  // K tiles = 4
  ASSERT_EQ(plan.size(), 2u * 4u * 2u);
  const std::vector<StageType> intermediate = {kDmaRead, kDmaRead, kFetch, kGemm};
  const std::vector<StageType> last = {kDmaRead, kDmaRead, kFetch, kGemm, kStore, kDmaWrite};
  for (std::size_t i = 0; i < plan.size(); ++i)
    EXPECT_EQ(types(plan[i]), i % 4 == 3 ? last : intermediate) << "tile " << i;
  for (const TilePlan& t : plan)
    for (const Stage& s : t.stages) EXPECT_TRUE(s.composite);
}

TEST(TilePlan, PinnedOperandsLoseTheirDmaReads) {
  GemmPlanSpec s = gemm(128, 128, 128);  // 4 x 2 x 4 = 32 tiles
  s.a_pinned = true;
  std::vector<TilePlan> a = gemm_plan(s);
  EXPECT_EQ(count(a, kDmaRead), 32u);
  for (const TilePlan& t : a) {
    ASSERT_EQ(t.stages[0].type, kDmaRead);
    EXPECT_GE(t.stages[0].addr, s.b_addr) << "the remaining read is B's";
    EXPECT_LT(t.stages[0].addr, s.b_addr + 128u * 128u * 2u);
  }
  s.b_pinned = true;
  std::vector<TilePlan> both = gemm_plan(s);
  EXPECT_EQ(count(both, kDmaRead), 0u);
  EXPECT_EQ(types(both[0]), (std::vector<StageType>{kFetch, kGemm}));
  EXPECT_EQ(types(both[1]), (std::vector<StageType>{kFetch, kGemm, kStore, kDmaWrite}));
  EXPECT_EQ(count(both, kDmaWrite), 16u);
}

TEST(TilePlan, KTileEpiloguesFollowEveryGemmAndOutputTileOnesPrecedeTheStore) {
  GemmPlanSpec s = gemm(32, 128, 32);  // one output tile, K tiles = 2
  s.epilogue = {{tl::MathOp::kRelu, tl::Scope::kOutputTile}, {tl::MathOp::kExp, tl::Scope::kKTile}};
  std::vector<TilePlan> plan = gemm_plan(s);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(types(plan[0]), (std::vector<StageType>{kDmaRead, kDmaRead, kFetch, kGemm, kMath}));
  EXPECT_EQ(types(plan[1]),
            (std::vector<StageType>{kDmaRead, kDmaRead, kFetch, kGemm, kMath, kMath, kStore, kDmaWrite}));
  EXPECT_EQ(plan[0].stages[4].op, tl::MathOp::kExp);
  EXPECT_EQ(plan[1].stages[4].op, tl::MathOp::kExp) << "k-tile epilogue right after the GEMM";
  EXPECT_EQ(plan[1].stages[5].op, tl::MathOp::kRelu) << "output-tile epilogue before the STORE";
  EXPECT_EQ(plan[1].stages[5].m, 32u);
  EXPECT_EQ(plan[1].stages[5].n, 32u);
}

TEST(TilePlan, AddressesAreRowMajorTileOffsetsAndEdgeTilesArePartial) {
  GemmPlanSpec s = gemm(40, 100, 50);  // M tiles 32 + 8, K tiles 64 + 36, N tiles 32 + 18
  s.a_bytes = 2;
  s.b_bytes = 2;
  s.out_bytes = 4;
  std::vector<TilePlan> plan = gemm_plan(s);
  ASSERT_EQ(plan.size(), 2u * 2u * 2u);
  // Tile 0 = (m 0, n 0, k 0): full 32 x 64 and 64 x 32 blocks at the matrices' starts.
  const TilePlan& t0 = plan[0];
  EXPECT_EQ(t0.stages[0].addr, s.a_addr);
  EXPECT_EQ(t0.stages[0].nbytes, 32u * 64u * 2u);
  EXPECT_EQ(t0.stages[1].addr, s.b_addr);
  EXPECT_EQ(t0.stages[1].nbytes, 64u * 32u * 2u);
  EXPECT_EQ(t0.stages[2].nbytes, 2u * 32u * 64u * 2u) << "FETCH brings both operands";
  EXPECT_EQ(t0.stages[3].m, 32u);
  EXPECT_EQ(t0.stages[3].k, 64u);
  EXPECT_EQ(t0.stages[3].n, 32u);
  // Tile 7 = (m 1, n 1, k 1): the 8 x 36 x 18 corner.
  const TilePlan& t7 = plan[7];
  ASSERT_EQ(types(t7), (std::vector<StageType>{kDmaRead, kDmaRead, kFetch, kGemm, kStore, kDmaWrite}));
  EXPECT_EQ(t7.stages[0].addr, s.a_addr + (32u * 100u + 64u) * 2u);  // A row 32, column 64
  EXPECT_EQ(t7.stages[0].nbytes, 8u * 36u * 2u);
  EXPECT_EQ(t7.stages[1].addr, s.b_addr + (64u * 50u + 32u) * 2u);  // B row 64, column 32
  EXPECT_EQ(t7.stages[1].nbytes, 36u * 18u * 2u);
  EXPECT_EQ(t7.stages[2].nbytes, (8u * 36u + 36u * 18u) * 2u);
  EXPECT_EQ(t7.stages[3].m, 8u);
  EXPECT_EQ(t7.stages[3].k, 36u);
  EXPECT_EQ(t7.stages[3].n, 18u);
  EXPECT_EQ(t7.stages[4].nbytes, 8u * 18u * 4u) << "STORE of the output tile";
  EXPECT_EQ(t7.stages[5].addr, s.out_addr + (32u * 50u + 32u) * 4u);  // out row 32, column 32
  EXPECT_EQ(t7.stages[5].nbytes, 8u * 18u * 4u);
  // Tile 3 = (m 0, n 1, k 1): the loop order is M -> N -> K.
  EXPECT_EQ(plan[3].stages[0].addr, s.a_addr + 64u * 2u);
  EXPECT_EQ(plan[3].stages[1].addr, s.b_addr + (64u * 50u + 32u) * 2u);
}

TEST(TilePlan, MathPlanIsFiveStagesPerTileInMThenNOrder) {
  MathPlanSpec s;
  s.m = 64;
  s.n = 80;  // tiles: M 2 x N 3 (32 + 32 + 16)
  s.src_addr = 0x1000;
  s.dst_addr = 0x90000;
  s.in_bytes = 2;
  s.out_bytes = 4;
  s.op = tl::MathOp::kExp;
  std::vector<TilePlan> plan = math_plan(s);
  ASSERT_EQ(plan.size(), 6u);
  for (const TilePlan& t : plan)
    EXPECT_EQ(types(t), (std::vector<StageType>{kDmaRead, kFetch, kMath, kStore, kDmaWrite}));
  // Tile 1 = (m 0, n 1), tile 5 = (m 1, n 2) with 16 columns.
  EXPECT_EQ(plan[1].stages[0].addr, s.src_addr + 32u * 2u);
  EXPECT_EQ(plan[1].stages[4].addr, s.dst_addr + 32u * 4u);
  const TilePlan& t5 = plan[5];
  EXPECT_EQ(t5.stages[0].addr, s.src_addr + (32u * 80u + 64u) * 2u);
  EXPECT_EQ(t5.stages[0].nbytes, 32u * 16u * 2u);
  EXPECT_EQ(t5.stages[1].nbytes, 32u * 16u * 2u);
  EXPECT_EQ(t5.stages[2].m, 32u);
  EXPECT_EQ(t5.stages[2].n, 16u);
  EXPECT_EQ(t5.stages[2].op, tl::MathOp::kExp);
  EXPECT_EQ(t5.stages[3].nbytes, 32u * 16u * 4u);
  EXPECT_EQ(t5.stages[4].addr, s.dst_addr + (32u * 80u + 64u) * 4u);
  EXPECT_EQ(t5.stages[4].nbytes, 32u * 16u * 4u);
}

}  // namespace
}  // namespace kbsim::pe
