// The two-pass model (ADR-0020, ADR-0052): the timing pass logs every data
// operation; the data pass replays the log to compute the real values.
//
// A message declares itself a data operation (Message::data_op, set by its
// constructor) and describes the operation in describe_op(). The core records
// an OpRecord around a component's service of such a message: from its
// delivery (or the grant of a shared resource the component asked for with
// it) to the moment that component sends it on. Components never log
// themselves, so a vendor's component is logged like a built-in one.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kbsim/dtype.hpp"
#include "kbsim/time.hpp"
#include "kbsim/tl.hpp"

namespace kbsim {

using NodeIndex = std::uint32_t;

/// What the data pass does with a record (ADR-0052 D1).
enum class OpKind : std::uint8_t { kMemory, kGemm, kMath, kUnknown };
inline constexpr std::string_view op_kind_name(OpKind k) noexcept {
  constexpr std::string_view n[] = {"memory", "gemm", "math", "unknown"};
  return n[static_cast<std::size_t>(k)];
}

using Bytes = std::vector<std::byte>;
using BytesPtr = std::shared_ptr<const Bytes>;

/// An operand or result of a data operation, as the data pass finds it in memory.
struct OpTensor {
  tl::Space space = tl::Space::kHbm;
  std::uint64_t addr = 0;  ///< HBM: physical address; TCM: the PE's scratch address
  Shape shape;
  DType dtype = DType::kF16;
  /// Read the value as it was at this time; kNever = at the reading op's end
  /// (ADR-0052 D4: inputs are captured at record end). A loaded operand is
  /// read as of the moment its load returned.
  Tick as_of = kNever;
  /// The value when the timing pass already knows it (a constant, stored known
  /// bytes): an immutable snapshot, used instead of reading memory.
  BytesPtr value;
  /// A tl.trans view: the bytes hold the tensor with its last two dimensions swapped back.
  bool transposed = false;

  std::uint64_t nbytes() const noexcept { return static_cast<std::uint64_t>(shape.elements()) * dtype_size(dtype); }
};

/// What a data operation computes.
struct DataOp {
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
};

/// One parameter of a record, for reports and traces.
struct OpParam {
  std::string key;
  std::variant<std::int64_t, double, std::string> value;
};

/// One logged data operation (ADR-0052 D1).
struct OpRecord {
  std::uint64_t seq = 0;  ///< position in completion order; ties in t_start keep it
  Tick t_start = 0, t_end = 0;
  NodeIndex component = 0;
  std::string_view component_id;  ///< the node's id (valid while the simulation lives)
  OpKind kind = OpKind::kUnknown;
  std::string name;  ///< e.g. "dma_read", "gemm_f16", "exp", "composite_gemm", "TileToken/GEMM"
  std::vector<OpParam> params;
  std::vector<std::uint64_t> dependency_ids;  ///< explicit ordering the addresses cannot express (seq values)
  std::shared_ptr<const DataOp> data;         ///< what the data pass computes; none = timeline only
  std::uint64_t flow = 0;                     ///< records of one tile share it (0 = none)
  bool flow_end = false;                      ///< the tile's last record

  template <class V>
  void param(std::string key, V v) {
    if constexpr (std::is_same_v<V, bool>)
      params.push_back({std::move(key), std::int64_t{v}});
    else if constexpr (std::is_integral_v<V>)
      params.push_back({std::move(key), static_cast<std::int64_t>(v)});
    else if constexpr (std::is_floating_point_v<V>)
      params.push_back({std::move(key), static_cast<double>(v)});
    else
      params.push_back({std::move(key), std::string(v)});
  }
};

/// A compute engine that computes its GEMMs' values in the data pass itself;
/// without it the core computes them (Eigen, f32 accumulation). Operands are
/// row-major f32: out (m x n) = a (m x k) x b (k x n).
class DataCompute {
 public:
  virtual void gemm(std::span<const float> a, std::span<const float> b, std::span<float> out, std::size_t m,
                    std::size_t k, std::size_t n) const = 0;

 protected:
  ~DataCompute() = default;
};

}  // namespace kbsim
