// The PE model's half of the two-pass model: what its data-operation records
// carry (DataOp, the OpRecord payload), the record kinds, and the data pass
// as a service (DataPass) that the host runtime asks for computed values.
// The generic record and the op-log hooks are in kbsim/op_record.hpp.
//
// Timing pass and data pass: the timing pass logs every data operation; the
// data pass replays the log in start order to compute the real values (see
// docs/model.md, "The two-pass data model").
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kbsim/op_record.hpp"
#include "kbsim/services.hpp"
#include "kbsim/time.hpp"
#include "kbsim/tl/dtype.hpp"
#include "kbsim/tl/tl.hpp"

namespace kbsim {

/// The record kinds of the PE model (OpRecord::kind): what the data pass does with a record.
namespace OpKind {
inline constexpr std::string_view kMemory = "memory";
inline constexpr std::string_view kGemm = "gemm";
inline constexpr std::string_view kMath = "math";
inline constexpr std::string_view kUnknown = "unknown";
}  // namespace OpKind

using Bytes = std::vector<std::byte>;
using BytesPtr = std::shared_ptr<const Bytes>;

/// An operand or result of a data operation, as the data pass finds it in memory.
struct OpTensor {
  tl::Space space = tl::Space::kHbm;
  /// HBM and cube SRAM: physical address (one byte-addressable memory in the data pass); TCM: the
  /// PE's scratch or TCM address; an IPCQ slot: its synthetic address, in its buffer kind's space.
  std::uint64_t addr = 0;
  Shape shape;
  DType dtype = DType::kF16;
  /// Read the value as it was at this time; kNever = at the reading op's end
  /// (inputs are captured at record end; docs/model.md,
  /// "Memory of the data pass"). A loaded operand is read as of the moment its
  /// load returned.
  Tick as_of = kNever;
  /// The value when the timing pass already knows it (a constant, stored known
  /// bytes): an immutable snapshot, used instead of reading memory.
  BytesPtr value;
  /// A tl.trans view: the bytes hold the tensor with its last two dimensions swapped back.
  bool transposed = false;
  /// A 2-D block in memory (tl.load / tl.store with a row stride): bytes from one row's start to the next; 0 =
  /// packed rows.
  std::uint64_t row_stride = 0;

  std::uint64_t nbytes() const noexcept { return static_cast<std::uint64_t>(shape.elements()) * dtype_size(dtype); }
  /// The bytes of memory it lies in: nbytes(), or a 2-D block's rows with the gaps between them.
  std::uint64_t span_bytes() const noexcept {
    if (row_stride == 0 || shape.rank() < 2 || shape.rows() == 0) return nbytes();
    return static_cast<std::uint64_t>(shape.rows() - 1) * row_stride +
           static_cast<std::uint64_t>(shape.cols()) * dtype_size(dtype);
  }

  /// As bytes, for a message that crosses between the processes of a split run.
  void save(ByteWriter& w) const {
    w.put(space);
    w.put(addr);
    w.put(shape);
    w.put(dtype);
    w.put(as_of);
    w.put(transposed);
    w.put(row_stride);
    w.put(value != nullptr);
    if (value) w.put_bytes(*value);
  }
  void load(ByteReader& r) {
    space = r.get<tl::Space>();
    addr = r.get<std::uint64_t>();
    shape = r.get<Shape>();
    dtype = r.get<DType>();
    as_of = r.get<Tick>();
    transposed = r.get<bool>();
    row_stride = r.get<std::uint64_t>();
    value = nullptr;
    if (r.get<bool>()) {
      const std::string_view b = r.get_bytes();
      const auto* first = reinterpret_cast<const std::byte*>(b.data());
      value = std::make_shared<const Bytes>(first, first + b.size());
    }
  }
};

/// What a data operation computes (the payload of the PE model's records).
struct DataOp final : OpPayload {
  enum class Kind : std::uint8_t { kCopy, kGemm, kMath };
  Kind kind = Kind::kCopy;
  tl::MathOp op = tl::MathOp::kExp;  ///< kMath
  int axis = -1;                     ///< reductions and softmax
  /// kGemm: a, b, then epilogue operands; kMath: the inputs; kCopy: the source.
  std::vector<OpTensor> in;
  OpTensor out;
  struct Epilogue {
    tl::MathOp op = tl::MathOp::kRelu;
    tl::Scope scope = tl::Scope::kOutputTile;
    double factor = 1.0;
    int operand = -1;  ///< index into `in`, or -1
  };
  std::vector<Epilogue> epilogue;  ///< kGemm
  std::uint32_t tile_k = 0;        ///< kGemm: K-tile size of k_tile-scope epilogues (0 = whole K)
  /// The compute engine whose DataCompute (if it has one) computes a kGemm; ~0u = none.
  NodeIndex engine = ~NodeIndex{0};

  // Crossing between the processes of a split run (registered by the data pass plugin).
  static constexpr std::string_view kName = "pe.data_op";
  std::string_view payload_name() const noexcept override { return kName; }
  void save(ByteWriter& w) const override {
    w.put(kind);
    w.put(op);
    w.put(axis);
    w.put(static_cast<std::uint64_t>(in.size()));
    for (const OpTensor& t : in) t.save(w);
    out.save(w);
    w.put(static_cast<std::uint64_t>(epilogue.size()));
    for (const Epilogue& e : epilogue) {
      w.put(e.op);
      w.put(e.scope);
      w.put(e.factor);
      w.put(e.operand);
    }
    w.put(tile_k);
    w.put(engine);
  }
  static std::shared_ptr<const OpPayload> load(ByteReader& r) {
    auto d = std::make_shared<DataOp>();
    d->kind = r.get<Kind>();
    d->op = r.get<tl::MathOp>();
    d->axis = r.get<int>();
    d->in.resize(r.get_count());
    for (OpTensor& t : d->in) t.load(r);
    d->out.load(r);
    d->epilogue.resize(r.get_count());
    for (Epilogue& e : d->epilogue) {
      e.op = r.get<tl::MathOp>();
      e.scope = r.get<tl::Scope>();
      e.factor = r.get<double>();
      e.operand = r.get<int>();
    }
    d->tile_k = r.get<std::uint32_t>();
    d->engine = r.get<NodeIndex>();
    return d;
  }
};

/// A compute engine that computes its GEMMs' values in the data pass itself;
/// without it the data pass computes them (Eigen, f32 accumulation). Operands are
/// row-major f32: out (m x n) = a (m x k) x b (k x n).
class DataCompute {
 public:
  virtual void gemm(std::span<const float> a, std::span<const float> b, std::span<float> out, std::size_t m,
                    std::size_t k, std::size_t n) const = 0;

 protected:
  ~DataCompute() = default;
};

/// The data pass of a run with --verify-data, as a service of the configured
/// system (absent otherwise): the host runtime logs host writes through it
/// and reads computed HBM values back.
class DataPass : public Service {
 public:
  static constexpr std::string_view kServiceName = "data_pass";
  /// A host write: `bytes` at physical address `pa`, visible from `t_start` on.
  virtual void host_write(std::string_view node, std::uint64_t pa, BytesPtr bytes, Tick t_start, Tick t_end) = 0;
  /// Execute every record no still-open record can precede.
  virtual void flush() = 0;
  /// HBM bytes at `pa` as of `t`, after what has been executed so far.
  virtual BytesPtr read_hbm(std::uint64_t pa, std::uint64_t nbytes, Tick t) const = 0;
};

}  // namespace kbsim
