// The DPPolicy resolver (docs/model.md, "The host runtime"), shard copies and a
// tensor's virtual layout and MMU mappings: pure functions, no simulation.
#include "placement.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>

#include "tensor_layout.hpp"

namespace kbsim {
namespace {

using rt::DPPolicy;
using rt::ShardSpec;
using rt::Split;

ahbm::MemoryMap device() {
  ahbm::MemoryMap m;
  m.sips = 2;
  m.cubes_per_sip = 16;
  m.pes_per_cube = 8;
  return m;
}

std::vector<ShardSpec> resolve(const DPPolicy& dp, const Shape& shape, DType dtype, unsigned sip = 0) {
  return host_runtime::resolve_placement(dp, shape, dtype, sip, device());
}

struct Expect {
  unsigned cube, pe;
  std::uint64_t offset, nbytes;
  Shape shape;
};

void expect_shards(const std::vector<ShardSpec>& got, const std::vector<Expect>& want, unsigned sip = 0) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("shard " + std::to_string(i));
    EXPECT_EQ(got[i].sip, sip);
    EXPECT_EQ(got[i].cube, want[i].cube);
    EXPECT_EQ(got[i].pe, want[i].pe);
    EXPECT_EQ(got[i].offset_bytes, want[i].offset);
    EXPECT_EQ(got[i].nbytes, want[i].nbytes);
    EXPECT_EQ(got[i].shape, want[i].shape) << got[i].shape.str();
    EXPECT_EQ(got[i].va, 0u);
    EXPECT_EQ(got[i].pa, 0u);
  }
}

/// The BAD_USE message `f` throws ("" and a failure otherwise).
template <class F>
std::string bad_use(F&& f) {
  try {
    f();
  } catch (const BenchError& e) {
    EXPECT_EQ(e.reason(), "BAD_USE");
    EXPECT_EQ(e.code(), ExitCode::kBench);
    return e.what();
  }
  ADD_FAILURE() << "expected a BenchError";
  return "";
}

TEST(PlacementResolve, DefaultPolicyIsOneWholeShardOnCube0Pe0) {
  expect_shards(resolve({}, {4, 6}, DType::kF16), {{0, 0, 0, 48, {4, 6}}});
}

TEST(PlacementResolve, ReplicateOverCubesAndPesGivesEveryPeTheWholeTensor) {
  DPPolicy dp{Split::kReplicate, Split::kReplicate, 2, 2};
  expect_shards(resolve(dp, {3, 5}, DType::kF32, 1),
                {{0, 0, 0, 60, {3, 5}}, {0, 1, 0, 60, {3, 5}}, {1, 0, 0, 60, {3, 5}}, {1, 1, 0, 60, {3, 5}}}, 1);
}

TEST(PlacementResolve, ColumnWiseGivesTheFirstPartsTheRemainder) {
  // 10 columns over 3 PEs: 4, 3, 3 (f32: a row of the tensor is 40 bytes).
  DPPolicy dp{Split::kReplicate, Split::kColumnWise, 3, 1};
  expect_shards(resolve(dp, {4, 10}, DType::kF32),
                {{0, 0, 0, 64, {4, 4}}, {0, 1, 16, 48, {4, 3}}, {0, 2, 28, 48, {4, 3}}});
}

TEST(PlacementResolve, RowWiseOverCubesThenColumnWiseOverPes) {
  // (5, 4) f16: cube 0 gets rows 0-2, cube 1 rows 3-4; each cube's PEs two columns.
  DPPolicy dp{Split::kRowWise, Split::kColumnWise, 2, 2};
  expect_shards(resolve(dp, {5, 4}, DType::kF16),
                {{0, 0, 0, 12, {3, 2}}, {0, 1, 4, 12, {3, 2}}, {1, 0, 24, 8, {2, 2}}, {1, 1, 28, 8, {2, 2}}});
}

TEST(PlacementResolve, ColumnWiseOverCubesThenRowWiseOverPes) {
  // (4, 6) f32: cube 0 columns 0-2, cube 1 columns 3-5; each cube's PEs two rows.
  DPPolicy dp{Split::kColumnWise, Split::kRowWise, 2, 2};
  expect_shards(resolve(dp, {4, 6}, DType::kF32),
                {{0, 0, 0, 24, {2, 3}}, {0, 1, 48, 24, {2, 3}}, {1, 0, 12, 24, {2, 3}}, {1, 1, 60, 24, {2, 3}}});
}

TEST(PlacementResolve, RowWiseRemainderAndReplicatedCubes) {
  // 7 rows over 3 PEs: 3, 2, 2; both cubes hold the same three pieces.
  DPPolicy dp{Split::kReplicate, Split::kRowWise, 3, 2};
  std::vector<Expect> one = {{0, 0, 0, 24, {3, 4}}, {0, 1, 24, 16, {2, 4}}, {0, 2, 40, 16, {2, 4}}};
  std::vector<Expect> want = one;
  for (Expect e : one) {
    e.cube = 1;
    want.push_back(e);
  }
  expect_shards(resolve(dp, {7, 4}, DType::kF16), want);
}

TEST(PlacementResolve, RankOneIsOneRowOfColumns) {
  DPPolicy dp{Split::kReplicate, Split::kColumnWise, 4, 1};
  expect_shards(resolve(dp, {10}, DType::kF16),
                {{0, 0, 0, 6, {3}}, {0, 1, 6, 6, {3}}, {0, 2, 12, 4, {2}}, {0, 3, 16, 4, {2}}});
}

TEST(PlacementResolve, TiledRowMajorHandsOutAGridOfBlocksRowByRow) {
  // (4, 6) f16 over 6 PEs: a 2 x 3 grid of (2, 2) blocks; PE k gets block (k / 3, k % 3).
  DPPolicy dp{Split::kReplicate, Split::kTiledRowMajor, 6, 1};
  expect_shards(resolve(dp, {4, 6}, DType::kF16), {{0, 0, 0, 8, {2, 2}},
                                                   {0, 1, 4, 8, {2, 2}},
                                                   {0, 2, 8, 8, {2, 2}},
                                                   {0, 3, 24, 8, {2, 2}},
                                                   {0, 4, 28, 8, {2, 2}},
                                                   {0, 5, 32, 8, {2, 2}}});
}

TEST(PlacementResolve, TiledColumnMajorHandsOutTheGridColumnByColumn) {
  // (5, 8) f32 over 4 cubes: a 2 x 2 grid (rows 3 + 2, columns 4 + 4); cube k gets block (k % 2, k / 2).
  DPPolicy dp{Split::kTiledColumnMajor, Split::kReplicate, 1, 4};
  expect_shards(resolve(dp, {5, 8}, DType::kF32),
                {{0, 0, 0, 48, {3, 4}}, {1, 0, 96, 32, {2, 4}}, {2, 0, 16, 48, {3, 4}}, {3, 0, 112, 32, {2, 4}}});
}

TEST(PlacementResolve, TiledGridsOfPrimeCountsAndVectorsAreOneRow) {
  // 3 parts: a 1 x 3 grid; a vector is always tiled along its columns.
  expect_shards(resolve({Split::kReplicate, Split::kTiledRowMajor, 3, 1}, {2, 3}, DType::kF16),
                {{0, 0, 0, 4, {2, 1}}, {0, 1, 2, 4, {2, 1}}, {0, 2, 4, 4, {2, 1}}});
  expect_shards(resolve({Split::kReplicate, Split::kTiledColumnMajor, 4, 1}, {8}, DType::kF16),
                {{0, 0, 0, 4, {2}}, {0, 1, 4, 4, {2}}, {0, 2, 8, 4, {2}}, {0, 3, 12, 4, {2}}});
  EXPECT_EQ(bad_use([] {
              resolve({Split::kReplicate, Split::kTiledRowMajor, 4, 1}, {1, 8}, DType::kF16);
            }),
            "BAD_USE: placement: shape (1, 8) cannot be split tiled_row_major over 4 PEs: 1 row leaves a part empty");
}

TEST(PlacementShards, TiledBlocksGatherAndScatterBack) {
  const Shape shape{4, 6};
  std::vector<std::uint16_t> values(24);
  std::iota(values.begin(), values.end(), std::uint16_t{0});
  std::vector<std::uint16_t> back(24, 0xffff);
  for (const ShardSpec& s : resolve({Split::kTiledColumnMajor, Split::kTiledRowMajor, 2, 2}, shape, DType::kI16)) {
    std::vector<std::uint16_t> piece(s.nbytes / 2);
    host_runtime::gather_shard(std::as_bytes(std::span(values)), shape, DType::kI16, s,
                               std::as_writable_bytes(std::span(piece)));
    host_runtime::scatter_shard(std::as_bytes(std::span(piece)), shape, DType::kI16, s,
                                std::as_writable_bytes(std::span(back)));
    if (s.cube == 1 && s.pe == 1) {  // cube 1: columns 3-5; its PE 1 the last of those
      EXPECT_EQ(piece, (std::vector<std::uint16_t>{5, 11, 17, 23}));
    }
  }
  EXPECT_EQ(back, values);
}

TEST(PlacementResolve, ZeroMeansEveryCubeAndEveryPe) {
  DPPolicy dp{Split::kReplicate, Split::kColumnWise, 0, 0};
  auto shards = resolve(dp, {1, 128}, DType::kF16);
  ASSERT_EQ(shards.size(), 128u);
  const ShardSpec& last = shards.back();
  EXPECT_EQ(last.cube, 15u);
  EXPECT_EQ(last.pe, 7u);
  EXPECT_EQ(last.offset_bytes, 7u * 16 * 2);
  EXPECT_EQ(last.nbytes, 32u);
  EXPECT_EQ(last.shape, (Shape{1, 16}));
  host_runtime::PlacementExtent e = host_runtime::placement_extent(dp, device());
  EXPECT_EQ(e.cubes, 16u);
  EXPECT_EQ(e.pes, 8u);
}

TEST(PlacementResolve, ErrorsNameTheProblem) {
  EXPECT_EQ(bad_use([] {
              resolve({Split::kReplicate, Split::kReplicate, 9, 1}, {4, 4}, DType::kF16);
            }),
            "BAD_USE: placement: the policy uses 9 PEs per cube but a cube has 8");
  EXPECT_EQ(bad_use([] {
              resolve({Split::kReplicate, Split::kReplicate, 1, 17}, {4, 4}, DType::kF16);
            }),
            "BAD_USE: placement: the policy uses 17 cubes but a SIP has 16");
  EXPECT_EQ(bad_use([] {
              resolve({}, {2, 3, 4}, DType::kF16);
            }),
            "BAD_USE: placement: shape (2, 3, 4) has rank 3; a DPPolicy places rank-1 and rank-2 tensors");
  EXPECT_EQ(bad_use([] { resolve({}, {0, 4}, DType::kF16); }), "BAD_USE: placement: shape (0, 4) has no elements");
  EXPECT_EQ(bad_use([] {
              resolve({}, {4, 4}, DType::kF16, 2);
            }),
            "BAD_USE: placement: SIP 2 does not exist (the system has 2)");
  EXPECT_EQ(bad_use([] {
              resolve({Split::kReplicate, Split::kColumnWise, 4, 1}, {4, 3}, DType::kF16);
            }),
            "BAD_USE: placement: shape (4, 3) cannot be split column_wise over 4 PEs: 3 columns leave a part empty");
  EXPECT_EQ(bad_use([] {
              resolve({Split::kRowWise, Split::kReplicate, 1, 2}, {8}, DType::kF16);
            }),
            "BAD_USE: placement: shape (8,) cannot be split row_wise over 2 cubes: 1 row leaves a part empty");
  // The PE level splits a cube's part: 5 columns -> 3 + 2, and 2 columns cannot feed 3 PEs.
  EXPECT_EQ(bad_use([] {
              resolve({Split::kColumnWise, Split::kColumnWise, 3, 2}, {2, 5}, DType::kF16);
            }),
            "BAD_USE: placement: shape (2, 2) cannot be split column_wise over 3 PEs: 2 columns leave a part empty");
}

TEST(PlacementShards, GatherAndScatterRoundTripEveryPiece) {
  // (5, 4) of 16-bit elements numbered 0..19, split rows over cubes, columns over PEs.
  const Shape shape{5, 4};
  std::vector<std::uint16_t> values(20);
  std::iota(values.begin(), values.end(), std::uint16_t{0});
  std::span<const std::byte> tensor = std::as_bytes(std::span(values));
  auto shards = resolve({Split::kRowWise, Split::kColumnWise, 2, 2}, shape, DType::kI16);
  std::vector<std::uint16_t> back(20, 0xffff);
  for (const ShardSpec& s : shards) {
    std::vector<std::uint16_t> piece(s.nbytes / 2);
    host_runtime::gather_shard(tensor, shape, DType::kI16, s, std::as_writable_bytes(std::span(piece)));
    host_runtime::scatter_shard(std::as_bytes(std::span(piece)), shape, DType::kI16, s,
                                std::as_writable_bytes(std::span(back)));
    if (s.cube == 1 && s.pe == 1) {
      EXPECT_EQ(piece, (std::vector<std::uint16_t>{14, 15, 18, 19}));
    }
  }
  EXPECT_EQ(back, values);
}

TEST(PlacementLayout, DistinctPiecesGetAlignedOffsetsAndReplicasShareOne) {
  // Both cubes hold the same two column pieces of (3, 5) f32: 3 and 2 columns.
  auto shards = resolve({Split::kReplicate, Split::kColumnWise, 2, 2}, {3, 5}, DType::kF32);
  ASSERT_EQ(host_runtime::distinct_pieces(shards).size(), 2u);
  EXPECT_EQ(host_runtime::lay_out_va(shards), 64u + 24);  // piece 0: 36 bytes at 0, piece 1: 24 bytes at 64
  std::vector<std::uint64_t> va;
  for (const ShardSpec& s : shards) va.push_back(s.va);
  EXPECT_EQ(va, (std::vector<std::uint64_t>{0, 64, 0, 64}));
}

TEST(PlacementLayout, EveryHolderMapsEveryPiecePreferringItsOwnReplica) {
  auto shards = resolve({Split::kReplicate, Split::kColumnWise, 2, 2}, {3, 5}, DType::kF32);
  host_runtime::lay_out_va(shards);
  for (std::size_t i = 0; i < shards.size(); ++i) shards[i].pa = 0x1000 * (i + 1);
  auto entries = host_runtime::mmu_entries(shards);
  ASSERT_EQ(entries.size(), 4u * 2);  // 4 holders x 2 pieces
  auto expect = [&](std::size_t i, unsigned cube, unsigned pe, std::uint64_t va, std::uint64_t pa, std::uint64_t n) {
    SCOPED_TRACE("entry " + std::to_string(i));
    EXPECT_EQ(entries[i].pe, (ahbm::PeRef{0, cube, pe}));
    EXPECT_EQ(entries[i].va, va);
    EXPECT_EQ(entries[i].pa, pa);
    EXPECT_EQ(entries[i].size, n);
  };
  expect(0, 0, 0, 0, 0x1000, 36);   // own piece
  expect(1, 0, 0, 64, 0x2000, 24);  // the other piece, in its cube
  expect(4, 1, 0, 0, 0x3000, 36);   // cube 1 uses its own replicas
  expect(5, 1, 0, 64, 0x4000, 24);
  expect(7, 1, 1, 64, 0x4000, 24);
}

TEST(PlacementLayout, ReplicatedTensorMapsOneVaToEachPesOwnCopy) {
  auto shards = resolve({Split::kReplicate, Split::kReplicate, 2, 2}, {2, 2}, DType::kF16);
  EXPECT_EQ(host_runtime::lay_out_va(shards), 8u);
  for (std::size_t i = 0; i < shards.size(); ++i) shards[i].pa = 0x100 * (i + 1);
  auto entries = host_runtime::mmu_entries(shards);
  ASSERT_EQ(entries.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(entries[i].pe, (ahbm::PeRef{0, shards[i].cube, shards[i].pe}));
    EXPECT_EQ(entries[i].va, 0u);
    EXPECT_EQ(entries[i].pa, shards[i].pa);
  }
}

}  // namespace
}  // namespace kbsim
