#include "placement.hpp"

#include <cstring>
#include <string>
#include <utility>

namespace kbsim::host_runtime {

namespace {

/// A rectangle of the (rows, cols) matrix view of a tensor.
struct Block {
  std::int64_t r0 = 0, c0 = 0, rows = 0, cols = 0;
};

[[noreturn]] void bad_use(const std::string& what) { throw BenchError("BAD_USE", "placement: " + what); }

Shape block_shape(const Block& b, bool rank1) { return rank1 ? Shape{b.cols} : Shape{b.rows, b.cols}; }

/// `n` rows or columns cut into `parts` runs (the first n % parts one longer), as (start, length).
std::vector<std::pair<std::int64_t, std::int64_t>> runs(std::int64_t n, unsigned parts) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  std::int64_t start = 0;
  for (unsigned k = 0; k < parts; ++k) {
    const std::int64_t len = n / parts + (static_cast<std::int64_t>(k) < n % parts ? 1 : 0);
    out.emplace_back(start, len);
    start += len;
  }
  return out;
}

/// The grid a tiled split cuts `parts` into: rows x cols, rows the largest divisor not above the square root.
std::pair<unsigned, unsigned> tile_grid(unsigned parts) {
  unsigned r = 1;
  for (unsigned d = 1; d * d <= parts; ++d)
    if (parts % d == 0) r = d;
  return {r, parts / r};
}

/// `b` split `how` into `parts` blocks (`over` names what the parts go to, for errors).
std::vector<Block> split(const Block& b, rt::Split how, unsigned parts, bool rank1, const char* over) {
  if (how == rt::Split::kReplicate) return std::vector<Block>(parts, b);
  const bool tiled = how == rt::Split::kTiledRowMajor || how == rt::Split::kTiledColumnMajor;
  auto [grid_rows, grid_cols] = tiled ? tile_grid(parts) : std::pair<unsigned, unsigned>{1, parts};
  if (tiled && rank1) grid_rows = 1, grid_cols = parts;  // a vector is one row: tile its columns only
  if (how == rt::Split::kRowWise) std::swap(grid_rows, grid_cols);
  const auto too_few = [&](std::int64_t n, unsigned cut, const char* unit) {
    if (n >= static_cast<std::int64_t>(cut)) return;
    bad_use("shape " + block_shape(b, rank1).str() + " cannot be split " + split_name(how) + " over " +
            std::to_string(parts) + " " + over + ": " + std::to_string(n) + " " + unit +
            (n == 1 ? " leaves" : "s leave") + " a part empty");
  };
  too_few(b.rows, grid_rows, "row");
  too_few(b.cols, grid_cols, "column");
  const auto row_runs = runs(b.rows, grid_rows), col_runs = runs(b.cols, grid_cols);
  std::vector<Block> out(parts);
  for (unsigned i = 0; i < grid_rows; ++i)
    for (unsigned j = 0; j < grid_cols; ++j) {
      const unsigned k = how == rt::Split::kTiledColumnMajor ? j * grid_rows + i : i * grid_cols + j;
      out[k] = {b.r0 + row_runs[i].first, b.c0 + col_runs[j].first, row_runs[i].second, col_runs[j].second};
    }
  return out;
}

/// Where a shard's rows sit in the row-major tensor.
struct Rows {
  std::int64_t count = 0;  ///< rows of the shard
  std::size_t bytes = 0;   ///< bytes per shard row
  std::size_t first = 0;   ///< byte offset of the first row in the tensor
  std::size_t stride = 0;  ///< bytes between rows in the tensor
};

Rows rows_of(const Shape& shape, DType dtype, const rt::ShardSpec& shard) {
  const std::size_t size = dtype_size(dtype);
  return {shard.shape.rank() == 2 ? shard.shape[0] : 1, static_cast<std::size_t>(shard.shape.cols()) * size,
          static_cast<std::size_t>(shard.offset_bytes), static_cast<std::size_t>(shape.cols()) * size};
}

}  // namespace

const char* split_name(rt::Split s) {
  switch (s) {
    case rt::Split::kReplicate: return "replicate";
    case rt::Split::kColumnWise: return "column_wise";
    case rt::Split::kRowWise: return "row_wise";
    case rt::Split::kTiledRowMajor: return "tiled_row_major";
    case rt::Split::kTiledColumnMajor: return "tiled_column_major";
  }
  return "?";
}

PlacementExtent placement_extent(const rt::DPPolicy& dp, const kbsim::ahbm::MemoryMap& map) {
  PlacementExtent e{dp.num_cubes ? dp.num_cubes : map.cubes_per_sip, dp.num_pes ? dp.num_pes : map.pes_per_cube};
  if (e.cubes > map.cubes_per_sip)
    bad_use("the policy uses " + std::to_string(e.cubes) + " cubes but a SIP has " + std::to_string(map.cubes_per_sip));
  if (e.pes > map.pes_per_cube)
    bad_use("the policy uses " + std::to_string(e.pes) + " PEs per cube but a cube has " +
            std::to_string(map.pes_per_cube));
  return e;
}

std::vector<rt::ShardSpec> resolve_placement(const rt::DPPolicy& dp, const Shape& shape, DType dtype, unsigned sip,
                                             const kbsim::ahbm::MemoryMap& map) {
  if (sip >= map.sips)
    bad_use("SIP " + std::to_string(sip) + " does not exist (the system has " + std::to_string(map.sips) + ")");
  if (shape.rank() != 1 && shape.rank() != 2)
    bad_use("shape " + shape.str() + " has rank " + std::to_string(shape.rank()) +
            "; a DPPolicy places rank-1 and rank-2 tensors");
  if (shape.elements() == 0) bad_use("shape " + shape.str() + " has no elements");
  const PlacementExtent e = placement_extent(dp, map);
  const bool rank1 = shape.rank() == 1;
  const std::uint64_t size = dtype_size(dtype);
  std::vector<rt::ShardSpec> out;
  std::vector<Block> cubes = split({0, 0, shape.rows(), shape.cols()}, dp.cube, e.cubes, rank1, "cubes");
  for (unsigned c = 0; c < e.cubes; ++c) {
    std::vector<Block> pes = split(cubes[c], dp.pe, e.pes, rank1, "PEs");
    for (unsigned p = 0; p < e.pes; ++p) {
      const Block& b = pes[p];
      rt::ShardSpec s;
      s.sip = sip;
      s.cube = c;
      s.pe = p;
      s.offset_bytes = static_cast<std::uint64_t>(b.r0 * shape.cols() + b.c0) * size;
      s.nbytes = static_cast<std::uint64_t>(b.rows * b.cols) * size;
      s.shape = block_shape(b, rank1);
      out.push_back(s);
    }
  }
  return out;
}

void gather_shard(std::span<const std::byte> tensor, const Shape& shape, DType dtype, const rt::ShardSpec& shard,
                  std::span<std::byte> out) {
  const Rows r = rows_of(shape, dtype, shard);
  for (std::int64_t i = 0; i < r.count; ++i) {
    const auto k = static_cast<std::size_t>(i);
    std::memcpy(out.data() + k * r.bytes, tensor.data() + r.first + k * r.stride, r.bytes);
  }
}

void scatter_shard(std::span<const std::byte> shard_bytes, const Shape& shape, DType dtype, const rt::ShardSpec& shard,
                   std::span<std::byte> tensor) {
  const Rows r = rows_of(shape, dtype, shard);
  for (std::int64_t i = 0; i < r.count; ++i) {
    const auto k = static_cast<std::size_t>(i);
    std::memcpy(tensor.data() + r.first + k * r.stride, shard_bytes.data() + k * r.bytes, r.bytes);
  }
}

}  // namespace kbsim::host_runtime
