// HostRuntime: slices of a tensor (docs/model.md, "The host runtime"): a
// region inside one shard, read or written with one request per row (in every
// replica, for a write). A region across shards is NOT_SUPPORTED, as the
// reference's slices are.
#include <algorithm>

#include "host_runtime.hpp"
#include "kbsim/ahbm/names.hpp"

namespace kbsim::host_runtime {

namespace {

[[noreturn]] void bad_use(const std::string& what) { throw BenchError("BAD_USE", what); }

std::string region_str(const rt::Region& r) {
  return "rows " + std::to_string(r.row) + ".." + std::to_string(r.row + r.rows - 1) + ", columns " +
         std::to_string(r.col) + ".." + std::to_string(r.col + r.cols - 1);
}

/// Where a shard's block sits in the tensor's (rows, cols) view.
struct Block {
  std::int64_t row = 0, col = 0, rows = 0, cols = 0;
};

Block block_of(const rt::Tensor::Info& info, const rt::ShardSpec& s) {
  const std::int64_t size = static_cast<std::int64_t>(dtype_size(info.dtype));
  const std::int64_t first = static_cast<std::int64_t>(s.offset_bytes) / size, cols = info.shape.cols();
  return {first / cols, first % cols, s.shape.rank() == 2 ? s.shape[0] : 1, s.shape.cols()};
}

bool inside(const rt::Region& r, const Block& b) {
  return r.row >= b.row && r.row + r.rows <= b.row + b.rows && r.col >= b.col && r.col + r.cols <= b.col + b.cols;
}

}  // namespace

std::vector<HostRuntime::Extent> HostRuntime::slice_rows(const rt::Tensor::Info& info, const rt::ShardSpec& s,
                                                         const rt::Region& region) const {
  const Block b = block_of(info, s);
  const std::uint64_t size = dtype_size(info.dtype);
  std::vector<Extent> rows;
  for (std::int64_t r = 0; r < region.rows; ++r) {
    const auto at = static_cast<std::uint64_t>((region.row - b.row + r) * b.cols + (region.col - b.col));
    rows.push_back({s.pa + at * size, static_cast<std::uint64_t>(region.cols) * size});
  }
  return rows;
}

const rt::ShardSpec& HostRuntime::slice_shard(const rt::Tensor::Info& info, const rt::Region& region,
                                              const char* what) const {
  const std::string named =
      std::string(what) + ": " + region_str(region) + " of tensor '" + info.name + "' " + info.shape.str();
  if (region.rows <= 0 || region.cols <= 0 || region.row < 0 || region.col < 0 ||
      region.row + region.rows > info.shape.rows() || region.col + region.cols > info.shape.cols())
    bad_use(named + ": the region is empty or leaves the tensor");
  for (const rt::ShardSpec& s : info.shards)
    if (inside(region, block_of(info, s))) return s;
  throw BenchError("NOT_SUPPORTED", named + " spans several shards; a slice must lie in one shard");
}

std::vector<double> HostRuntime::read_slice(const rt::Tensor& t, const rt::Region& region) {
  const rt::Tensor::Info& info = live(t, "read_slice");
  const rt::ShardSpec& s = slice_shard(info, region, "read_slice");
  wait_for_launches_on(s.sip);
  const std::vector<Extent> rows = slice_rows(info, s, region);
  transfer(info, kbsim::ahbm::MemOp::kRead, rows);
  if (data_) data_->flush();
  std::vector<double> out;
  std::vector<std::byte> buf;
  const std::size_t size = dtype_size(info.dtype);
  for (const Extent& e : rows) {
    const BytesPtr computed = data_ ? data_->read_hbm(e.pa, e.nbytes, now()) : nullptr;  // the values computed
    if (!computed) {
      buf.resize(e.nbytes);
      memory_.read(e.pa, buf);
    }
    const std::byte* p = computed ? computed->data() : buf.data();
    for (std::size_t k = 0; k < e.nbytes; k += size) out.push_back(decode_value(p + k, info.dtype));
  }
  return out;
}

rt::TransferResult HostRuntime::write_slice(const rt::Tensor& t, const rt::Region& region,
                                            std::span<const double> values) {
  const rt::Tensor::Info& info = live(t, "write_slice");
  const rt::ShardSpec& piece = slice_shard(info, region, "write_slice");
  const auto n = static_cast<std::size_t>(region.rows * region.cols);
  if (values.size() != n && values.size() != 1)
    bad_use("write_slice: " + region_str(region) + " of tensor '" + info.name + "' takes " + std::to_string(n) +
            " values or one, got " + std::to_string(values.size()));
  const std::size_t size = dtype_size(info.dtype), row_bytes = static_cast<std::size_t>(region.cols) * size;
  std::vector<Extent> rows;
  std::vector<BytesPtr> data;
  for (const rt::ShardSpec& s : info.shards) {
    if (s.offset_bytes != piece.offset_bytes || s.shape != piece.shape) continue;  // another piece
    for (const Extent& e : slice_rows(info, s, region)) {
      auto buf = std::make_shared<Bytes>(row_bytes);
      const std::size_t first = (rows.size() % static_cast<std::size_t>(region.rows)) * region.cols;
      for (std::size_t k = 0; k < static_cast<std::size_t>(region.cols); ++k)
        encode_value(values.size() == 1 ? values[0] : values[first + k], info.dtype, buf->data() + k * size);
      memory_.write(e.pa, *buf);  // visible at issue
      rows.push_back(e);
      data.push_back(std::move(buf));
    }
  }
  rt::TransferResult r = transfer(info, kbsim::ahbm::MemOp::kWrite, rows);
  if (data_) {
    const std::string ep = kbsim::ahbm::names::io(piece.sip, 0, "pcie_ep");
    for (std::size_t k = 0; k < rows.size(); ++k)
      data_->host_write(ep, rows[k].pa, std::move(data[k]), r.t_submit, r.t_done);
  }
  return r;
}

}  // namespace kbsim::host_runtime
