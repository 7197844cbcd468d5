// Tile plans (docs/model.md, "Commands and tiles"): the pure functions that
// turn a composite command into per-tile stage sequences. No simulation state;
// tested on their own.
//
// GEMM: loop M -> N -> K over tiles (default 32/64/32); per (m, n, k) tile
//   [DMA_READ(A)] [DMA_READ(B)] FETCH GEMM [MATH(k_tile epilogue)]*
//   and at the last k only: [MATH(output_tile epilogue)]* STORE DMA_WRITE.
//   A pinned operand (already loaded into TCM) has no DMA_READ.
// MATH: loop M -> N; per (m, n) tile DMA_READ FETCH MATH STORE DMA_WRITE.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kbsim/tl/tl.hpp"

namespace kbsim::pe {

enum class StageType : std::uint8_t { kDmaRead, kFetch, kGemm, kMath, kStore, kDmaWrite };
inline constexpr std::size_t kStageTypes = 6;
inline constexpr std::string_view stage_name(StageType t) noexcept {
  constexpr std::string_view n[] = {"dma_read", "fetch", "gemm", "math", "store", "dma_write"};
  return n[static_cast<std::size_t>(t)];
}

/// The PE engine that runs a stage.
enum class Role : std::uint8_t { kDma, kFetchStore, kGemm, kMath };
inline constexpr std::size_t kRoles = 4;
inline constexpr Role role_of(StageType t) noexcept {
  switch (t) {
    case StageType::kDmaRead:
    case StageType::kDmaWrite: return Role::kDma;
    case StageType::kFetch:
    case StageType::kStore: return Role::kFetchStore;
    case StageType::kGemm: return Role::kGemm;
    case StageType::kMath: return Role::kMath;
  }
  return Role::kDma;
}
/// The PE template component name of a role ("pe_dma", ...).
inline constexpr std::string_view role_component(Role r) noexcept {
  constexpr std::string_view n[] = {"pe_dma", "pe_fetch_store", "pe_gemm", "pe_math"};
  return n[static_cast<std::size_t>(r)];
}

struct Stage {
  StageType type = StageType::kDmaRead;
  std::uint64_t addr = 0;             ///< DMA: virtual address of the first byte
  std::uint64_t nbytes = 0;           ///< DMA / FETCH / STORE: bytes moved
  std::uint32_t m = 0, k = 0, n = 0;  ///< GEMM: tile dims; MATH: m x n output elements
  tl::MathOp op = tl::MathOp::kExp;   ///< MATH only
  bool composite = true;              ///< part of a composite pipeline (false for a simple command's single stage)
};

struct TilePlan {
  std::vector<Stage> stages;
};

struct EpilogueSpec {
  tl::MathOp op = tl::MathOp::kRelu;
  tl::Scope scope = tl::Scope::kOutputTile;
};

struct GemmPlanSpec {
  std::uint64_t m = 0, k = 0, n = 0;
  std::uint32_t tile_m = 32, tile_k = 64, tile_n = 32;
  std::uint64_t a_addr = 0, b_addr = 0, out_addr = 0;     ///< row-major (M,K), (K,N), (M,N)
  std::uint32_t a_bytes = 2, b_bytes = 2, out_bytes = 2;  ///< element sizes
  bool a_pinned = false, b_pinned = false;
  std::vector<EpilogueSpec> epilogue;
};

struct MathPlanSpec {
  std::uint64_t m = 0, n = 0;
  std::uint32_t tile_m = 32, tile_n = 32;
  std::uint64_t src_addr = 0, dst_addr = 0;
  std::uint32_t in_bytes = 2, out_bytes = 2;
  tl::MathOp op = tl::MathOp::kExp;
};

inline std::uint64_t tiles_along(std::uint64_t extent, std::uint32_t tile) {
  return std::max<std::uint64_t>(1, (extent + tile - 1) / tile);
}

inline std::vector<TilePlan> gemm_plan(const GemmPlanSpec& s) {
  const std::uint64_t mt = tiles_along(s.m, s.tile_m), kt = tiles_along(s.k, s.tile_k), nt = tiles_along(s.n, s.tile_n);
  auto span = [](std::uint64_t i, std::uint32_t tile, std::uint64_t extent) {
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(tile, extent - std::min(extent, i * tile)));
  };
  std::vector<TilePlan> plan;
  plan.reserve(mt * nt * kt);
  for (std::uint64_t mi = 0; mi < mt; ++mi)
    for (std::uint64_t ni = 0; ni < nt; ++ni)
      for (std::uint64_t ki = 0; ki < kt; ++ki) {
        const std::uint32_t tm = span(mi, s.tile_m, s.m), tk = span(ki, s.tile_k, s.k), tn = span(ni, s.tile_n, s.n);
        const std::uint64_t a_tile = std::uint64_t{tm} * tk * s.a_bytes, b_tile = std::uint64_t{tk} * tn * s.b_bytes;
        const std::uint64_t out_tile = std::uint64_t{tm} * tn * s.out_bytes;
        TilePlan t;
        t.stages.reserve(8 + s.epilogue.size());
        if (!s.a_pinned)
          t.stages.push_back(
              {StageType::kDmaRead, s.a_addr + (mi * s.tile_m * s.k + ki * s.tile_k) * s.a_bytes, a_tile});
        if (!s.b_pinned)
          t.stages.push_back(
              {StageType::kDmaRead, s.b_addr + (ki * s.tile_k * s.n + ni * s.tile_n) * s.b_bytes, b_tile});
        t.stages.push_back({StageType::kFetch, 0, a_tile + b_tile});
        t.stages.push_back({StageType::kGemm, 0, 0, tm, tk, tn});
        for (const EpilogueSpec& e : s.epilogue)
          if (e.scope == tl::Scope::kKTile) t.stages.push_back({StageType::kMath, 0, 0, tm, 0, tn, e.op});
        if (ki + 1 == kt) {
          for (const EpilogueSpec& e : s.epilogue)
            if (e.scope == tl::Scope::kOutputTile) t.stages.push_back({StageType::kMath, 0, 0, tm, 0, tn, e.op});
          t.stages.push_back({StageType::kStore, 0, out_tile});
          t.stages.push_back(
              {StageType::kDmaWrite, s.out_addr + (mi * s.tile_m * s.n + ni * s.tile_n) * s.out_bytes, out_tile});
        }
        plan.push_back(std::move(t));
      }
  return plan;
}

inline std::vector<TilePlan> math_plan(const MathPlanSpec& s) {
  const std::uint64_t mt = tiles_along(s.m, s.tile_m), nt = tiles_along(s.n, s.tile_n);
  std::vector<TilePlan> plan;
  plan.reserve(mt * nt);
  for (std::uint64_t mi = 0; mi < mt; ++mi)
    for (std::uint64_t ni = 0; ni < nt; ++ni) {
      const auto tm = static_cast<std::uint32_t>(std::min<std::uint64_t>(s.tile_m, s.m - std::min(s.m, mi * s.tile_m)));
      const auto tn = static_cast<std::uint32_t>(std::min<std::uint64_t>(s.tile_n, s.n - std::min(s.n, ni * s.tile_n)));
      const std::uint64_t in = std::uint64_t{tm} * tn * s.in_bytes, out = std::uint64_t{tm} * tn * s.out_bytes;
      const std::uint64_t off = mi * s.tile_m * s.n + ni * s.tile_n;
      TilePlan t;
      t.stages = {{StageType::kDmaRead, s.src_addr + off * s.in_bytes, in},
                  {StageType::kFetch, 0, in},
                  {StageType::kMath, 0, 0, tm, 0, tn, s.op},
                  {StageType::kStore, 0, out},
                  {StageType::kDmaWrite, s.dst_addr + off * s.out_bytes, out}};
      plan.push_back(std::move(t));
    }
  return plan;
}

}  // namespace kbsim::pe
