// The kernel API (`tl`; docs/model.md, "The kernel API"). A kernel is a plain
// C++ function
//
//   void my_kernel(kbsim::tl::Program& tl, const kbsim::tl::Args& args);
//
// registered by a plugin (KBSIM_PLUGIN { kbsim::add_kernel(plugin, "my-kernel", &my_kernel, "..."); })
// and launched by name from the host runtime. Each PE runs its own instance
// on a fiber: every call that issues a command suspends the kernel until the
// PE's engines finish it, so kernel code is ordinary sequential code.
//
// Timing pass semantics (docs/model.md, "The two-pass data model"): `load`
// returns the real bytes from the memory store, so a kernel may branch on
// loaded values; results of compute (dot, math, composite) are pending: their
// values arrive with the data pass, and reading them here throws tl::Error.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kbsim/bytes.hpp"
#include "kbsim/errors.hpp"
#include "kbsim/tl/dtype.hpp"

namespace kbsim::tl {

/// Misuse of the kernel API (bad shape, pending data read, wrong argument type...).
/// It is a kbsim::SimError: a kernel that misuses the API fails its run.
class Error : public SimError {
 public:
  using SimError::SimError;
};

/// Where a tensor's bytes are: HBM (a virtual or physical address), the PE's TCM (a scratch or
/// pe_tcm_addr physical address) or the cube's shared SRAM (a cube_sram_addr physical address).
enum class Space : std::uint8_t { kHbm, kTcm, kSram };
inline std::string_view space_name(Space s) noexcept {
  return s == Space::kHbm ? "hbm" : s == Space::kTcm ? "tcm" : "sram";
}

// clang-format off
enum class MathOp : std::uint8_t {
  // unary
  kExp, kLog, kSqrt, kAbs, kSigmoid, kCos, kSin, kRelu,
  // binary and other
  kAdd, kSub, kMul, kDiv, kMaximum, kMinimum, kFma, kClamp, kWhere, kSoftmax,
  // reductions (over one axis; the axis is kept with size 1)
  kSum, kMax, kMin,
  // GEMM epilogues
  kDequant, kBias, kScale,
};
// clang-format on
std::string_view math_op_name(MathOp op) noexcept;

class Program;

/// A tensor as a kernel sees it: an address, a shape and a dtype, plus the
/// bytes when they are known in the timing pass (loaded data, constants).
class Tensor {
 public:
  struct Desc {
    Shape shape;
    DType dtype = DType::kF16;
    std::uint64_t addr = 0;  ///< virtual address (HBM) or scratch address (TCM)
    Space space = Space::kHbm;
    bool pinned = false;   ///< resident in TCM (loaded), so a composite skips its DMA_READ
    bool pending = false;  ///< a compute result: its values exist only in the data pass
    std::shared_ptr<const std::vector<std::byte>> data;  ///< the values, when known
    /// A loaded tensor: the physical address it was read from and when its load
    /// returned (ps); the data pass reads memory as of then.
    std::uint64_t loaded_pa = 0, loaded_at = ~std::uint64_t{0};
    /// A view with the last two dimensions swapped (tl.trans): the bytes are
    /// laid out for the shape before the swap.
    bool transposed = false;
    /// The memory `loaded_pa` lies in: HBM (or cube SRAM, both physical memory) for a tl.load;
    /// for a received slot, its IPCQ buffer kind's.
    Space loaded_space = Space::kHbm;
    /// A 2-D load (tl.load with a row stride): bytes from one row's start to the next at `loaded_pa`; 0 = the
    /// rows are packed.
    std::uint64_t loaded_row_stride = 0;
    /// The TCM scratch allocation a compute result or constant holds (tl.free gives it back); 0: none.
    std::uint64_t scratch_id = 0;
  };
  Tensor() = default;
  Tensor(Program* ctx, Desc d) : ctx_(ctx), d_(std::move(d)) {}

  const Shape& shape() const noexcept { return d_.shape; }
  DType dtype() const noexcept { return d_.dtype; }
  std::uint64_t addr() const noexcept { return d_.addr; }
  Space space() const noexcept { return d_.space; }
  bool pinned() const noexcept { return d_.pinned; }
  bool pending() const noexcept { return d_.pending; }
  bool valid() const noexcept { return ctx_ != nullptr; }
  std::uint64_t nbytes() const noexcept {
    return static_cast<std::uint64_t>(d_.shape.elements()) * dtype_size(d_.dtype);
  }
  const Desc& desc() const noexcept { return d_; }

  /// The raw bytes; throws tl::Error for a pending compute result.
  std::span<const std::byte> bytes() const;
  /// Element `i` (row-major flat index) converted to double.
  double item(std::int64_t i) const;
  /// Element (r, c) of a 2-D tensor.
  double at(std::int64_t r, std::int64_t c) const { return item(r * d_.shape.cols() + c); }

  // Arithmetic issues math commands (add, sub, mul, div) on the tensor's PE.
  friend Tensor operator+(const Tensor& a, const Tensor& b);
  friend Tensor operator-(const Tensor& a, const Tensor& b);
  friend Tensor operator*(const Tensor& a, const Tensor& b);
  friend Tensor operator/(const Tensor& a, const Tensor& b);

 private:
  Program* ctx_ = nullptr;
  Desc d_;
};

/// Completion handle of a non-blocking command (composite).
struct Handle {
  std::uint64_t id = 0;
};

/// A receive started with recv_async; tl.wait(future) returns what it received.
struct RecvFuture {
  std::uint64_t id = 0;
};

enum class Scope : std::uint8_t { kKTile, kOutputTile };

/// A fused epilogue op of a composite GEMM: dequant / bias / relu / scale.
struct Epilogue {
  MathOp op = MathOp::kRelu;
  Scope scope = Scope::kOutputTile;
  double factor = 1.0;  ///< scale / dequant factor
  Tensor operand;       ///< bias vector or per-K scale, when the op takes one
};

/// tl.composite: op "gemm" (out = a x b, tiled) or "math" (out = math_op(a), tiled).
struct CompositeSpec {
  enum class Op : std::uint8_t { kGemm, kMath } op = Op::kGemm;
  Tensor a, b;                                       ///< loaded (pinned) or ref operands
  std::uint64_t out_ptr = 0;                         ///< where the output tiles are written (virtual address)
  DType out_dtype = DType::kF16;                     ///< accumulation is f32; tiles are stored in this type
  MathOp math_op = MathOp::kExp;                     ///< op "math" only
  std::vector<Epilogue> epilogue;                    ///< op "gemm" only
  std::uint32_t tile_m = 0, tile_k = 0, tile_n = 0;  ///< 0 = the PE scheduler's tile sizes
};

/// One kernel argument's view of a host tensor.
struct TensorArg {
  std::uint64_t ptr = 0;  ///< virtual address of the tensor's first byte
  Shape shape;            ///< the whole tensor
  DType dtype = DType::kF16;
  struct Shard {
    unsigned cube = 0, pe = 0;
    std::uint64_t ptr = 0;  ///< virtual address of this shard
    std::uint64_t offset_bytes = 0, nbytes = 0;
    Shape shape;
  };
  std::vector<Shard> shards;
  /// The shard placed on (cube, pe), or nullptr.
  const Shard* shard(unsigned cube, unsigned pe) const noexcept {
    for (const Shard& s : shards)
      if (s.cube == cube && s.pe == pe) return &s;
    return nullptr;
  }
};

/// The arguments of a launch, in order: tensors, integers and reals.
class Args {
 public:
  using Value = std::variant<TensorArg, std::int64_t, double>;
  Args() = default;
  explicit Args(std::vector<Value> v) : v_(std::move(v)) {}
  std::size_t size() const noexcept { return v_.size(); }
  const std::vector<Value>& values() const noexcept { return v_; }
  const TensorArg& tensor(std::size_t i) const { return get<TensorArg>(i, "a tensor"); }
  std::int64_t i64(std::size_t i) const { return get<std::int64_t>(i, "an integer"); }
  double f64(std::size_t i) const {
    if (i < v_.size() && std::holds_alternative<std::int64_t>(v_[i]))
      return static_cast<double>(std::get<std::int64_t>(v_[i]));
    return get<double>(i, "a real number");
  }

 private:
  template <class T>
  const T& get(std::size_t i, const char* what) const {
    if (i >= v_.size())
      throw Error("kernel argument " + std::to_string(i) + " is missing (" + std::to_string(v_.size()) + " given)");
    if (!std::holds_alternative<T>(v_[i])) throw Error("kernel argument " + std::to_string(i) + " is not " + what);
    return std::get<T>(v_[i]);
  }
  std::vector<Value> v_;
};

/// A launch's arguments as bytes, for a command that crosses between the processes of a split run.
inline void save(ByteWriter& w, const Args& a) {
  w.put(static_cast<std::uint64_t>(a.size()));
  for (const Args::Value& v : a.values()) {
    w.put(static_cast<std::uint8_t>(v.index()));
    if (const auto* t = std::get_if<TensorArg>(&v)) {
      w.put(t->ptr);
      w.put(t->shape);
      w.put(t->dtype);
      w.put_vector<TensorArg::Shard>(t->shards);
    } else if (const auto* i = std::get_if<std::int64_t>(&v)) {
      w.put(*i);
    } else {
      w.put(std::get<double>(v));
    }
  }
}
inline void load(ByteReader& r, Args& a) {
  std::vector<Args::Value> values(r.get_count());
  for (Args::Value& v : values) {
    const auto kind = r.get<std::uint8_t>();
    if (kind == 0) {
      TensorArg t;
      t.ptr = r.get<std::uint64_t>();
      t.shape = r.get<Shape>();
      t.dtype = r.get<DType>();
      t.shards = r.get_vector<TensorArg::Shard>();
      v = std::move(t);
    } else if (kind == 1) {
      v = r.get<std::int64_t>();
    } else if (kind == 2) {
      v = r.get<double>();
    } else {
      throw SimError("a kernel argument from another process is of kind " + std::to_string(kind) + ", which is none");
    }
  }
  a = Args(std::move(values));
}

/// The per-PE kernel context. Implemented by the PE_CPU plugin.
class Program {
 public:
  // --- identity: axis 0 = PE within the cube, axis 1 = cube (docs/model.md, "The kernel API") ---
  virtual int program_id(int axis) const = 0;
  virtual int num_programs(int axis) const = 0;

  // --- data movement (blocking) ---
  /// DMA_READ of `shape` at `ptr` into TCM; returns the real bytes (the tensor is pinned).
  virtual Tensor load(std::uint64_t ptr, const Shape& shape, DType dtype = DType::kF16) = 0;
  /// DMA_WRITE of `value` to `ptr`. Known bytes are visible in memory at issue.
  virtual void store(std::uint64_t ptr, const Tensor& value) = 0;
  /// 2-D DMA (one descriptor): the rows of a (rows, cols) block of a wider row-major matrix, whose rows start
  /// `row_stride` elements apart (its leading dimension, >= cols). It costs what a 1-D DMA of the same bytes
  /// from the same memory costs; the block lands packed in TCM. For a head's columns out of a fused projection,
  /// or a slice into a KV cache.
  virtual Tensor load(std::uint64_t ptr, const Shape& shape, DType dtype, std::uint64_t row_stride) = 0;
  /// 2-D DMA_WRITE of `value` (rows, cols) into rows `row_stride` elements apart.
  virtual void store(std::uint64_t ptr, const Tensor& value, std::uint64_t row_stride) = 0;
  /// A reference to memory without a load: a composite streams it tile by tile.
  virtual Tensor ref(std::uint64_t ptr, const Shape& shape, DType dtype = DType::kF16) = 0;

  // --- compute (blocking; results pending in the timing pass) ---
  /// (M,K) x (K,N) -> (M,N) on the GEMM engine; both operands in TCM.
  virtual Tensor dot(const Tensor& a, const Tensor& b) = 0;
  /// Any math op on the MATH engine. Reductions take `axis`.
  virtual Tensor math(MathOp op, std::span<const Tensor> inputs, int axis = -1) = 0;

  // --- composite (non-blocking) ---
  virtual Handle composite(const CompositeSpec& spec) = 0;

  // --- IPCQ: queues between PEs (docs/model.md, "IPCQ"); directions as a CCL algorithm installed them ---
  /// Send `src` to the peer in direction `dir`. Its value is captured now; the
  /// call returns once the send is on its way (it waits only for a free slot).
  virtual void send(std::string_view dir, const Tensor& src) = 0;
  /// Send raw memory: `shape` x `dtype` at `src_addr` in `space`. TCM: a value this PE holds
  /// there (a compute result or a copy_to_dst recv); HBM and cube SRAM (a physical
  /// cube_sram_addr): tl.load-ed first, then sent.
  virtual void send(std::string_view dir, std::uint64_t src_addr, const Shape& shape, DType dtype = DType::kF16,
                    Space space = Space::kTcm) = 0;
  /// Wait for the next message from `dir`, consume its slot and return it (the
  /// tensor names the rx slot: "return slot" mode).
  virtual Tensor recv(std::string_view dir, const Shape& shape, DType dtype = DType::kF16) = 0;
  /// Same, then copy it to `dst_addr` in `dst_space` ("copy to destination" mode): one DMA write
  /// by this PE's DMA from the slot to the destination, waited for. HBM: `dst_addr` is virtual
  /// (as tl.store's); TCM: a physical address in this PE's TCM (pe_tcm_addr), and the tensor
  /// returned names the copy there; cube SRAM: a physical cube_sram_addr. HBM and SRAM return
  /// the slot tensor.
  virtual Tensor recv(std::string_view dir, const Shape& shape, DType dtype, std::uint64_t dst_addr,
                      Space dst_space) = 0;
  /// Start a recv and go on; tl.wait(future) completes it.
  virtual RecvFuture recv_async(std::string_view dir, const Shape& shape, DType dtype = DType::kF16) = 0;
  virtual Tensor wait(RecvFuture f) = 0;
  /// Diagnostic: wait for the next message's arrival only (no slot read, no credit).
  virtual void recv_no_consume(std::string_view dir, const Shape& shape, DType dtype = DType::kF16) = 0;

  // --- control ---
  /// Mark the start of a named phase of this kernel (it ends where the next
  /// one starts, or at the kernel's end); benches report time per phase.
  virtual void phase(std::string_view name) = 0;
  /// `n` PE_CPU cycles of scalar work.
  virtual void cycles(std::uint64_t n) = 0;
  /// Wait for one composite, or (no argument) for all outstanding ones.
  virtual void wait(Handle h) = 0;
  virtual void wait() = 0;

  /// Give the TCM scratch of `t` (a compute result or a constant) back for later results of this kernel run (no
  /// command). `t` and every view of it must not be used afterwards. A long loop frees what it no longer needs;
  /// scratch not freed is released when the kernel returns.
  virtual void free(const Tensor& t) = 0;

  // --- TCM placeholders (no command) ---
  virtual Tensor full(const Shape& shape, double value, DType dtype = DType::kF16) = 0;
  Tensor zeros(const Shape& shape, DType dtype = DType::kF16) { return full(shape, 0.0, dtype); }
  virtual Tensor arange(std::int64_t start, std::int64_t end, DType dtype = DType::kI32) = 0;

  // --- kernels in another language ---
  /// Run `fn` on the simulation's own stack instead of the kernel's, then come back; no simulated time passes. For
  /// a kernel whose code must not run on a stack the PE switches (one written in Python runs its interpreter
  /// there, and asks this Program for each tl call in between). `fn` must not call the kernel API.
  virtual void outside(const std::function<void()>& fn) = 0;

  /// The last two dimensions swapped; same address and data.
  Tensor trans(const Tensor& x);
  /// The same elements in row-major order under another shape of as many elements; same address and data. Not
  /// for a tl.trans view or a 2-D load's block (their rows are not laid out in order).
  Tensor reshape(const Tensor& x, const Shape& shape);

  // --- math conveniences ---
  Tensor exp(const Tensor& x) { return unary(MathOp::kExp, x); }
  Tensor log(const Tensor& x) { return unary(MathOp::kLog, x); }
  Tensor sqrt(const Tensor& x) { return unary(MathOp::kSqrt, x); }
  Tensor abs(const Tensor& x) { return unary(MathOp::kAbs, x); }
  Tensor sigmoid(const Tensor& x) { return unary(MathOp::kSigmoid, x); }
  Tensor cos(const Tensor& x) { return unary(MathOp::kCos, x); }
  Tensor sin(const Tensor& x) { return unary(MathOp::kSin, x); }
  Tensor maximum(const Tensor& a, const Tensor& b) { return binary(MathOp::kMaximum, a, b); }
  Tensor minimum(const Tensor& a, const Tensor& b) { return binary(MathOp::kMinimum, a, b); }
  Tensor fma(const Tensor& a, const Tensor& b, const Tensor& c) {
    const Tensor in[] = {a, b, c};
    return math(MathOp::kFma, in);
  }
  Tensor clamp(const Tensor& x, const Tensor& lo, const Tensor& hi) {
    const Tensor in[] = {x, lo, hi};
    return math(MathOp::kClamp, in);
  }
  Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
    const Tensor in[] = {cond, a, b};
    return math(MathOp::kWhere, in);
  }
  Tensor softmax(const Tensor& x, int axis = -1) {
    const Tensor in[] = {x};
    return math(MathOp::kSoftmax, in, axis);
  }
  Tensor sum(const Tensor& x, int axis) { return reduce(MathOp::kSum, x, axis); }
  Tensor max(const Tensor& x, int axis) { return reduce(MathOp::kMax, x, axis); }
  Tensor min(const Tensor& x, int axis) { return reduce(MathOp::kMin, x, axis); }
  Tensor unary(MathOp op, const Tensor& x) {
    const Tensor in[] = {x};
    return math(op, in);
  }
  Tensor binary(MathOp op, const Tensor& a, const Tensor& b) {
    const Tensor in[] = {a, b};
    return math(op, in);
  }
  Tensor reduce(MathOp op, const Tensor& x, int axis) {
    const Tensor in[] = {x};
    return math(op, in, axis);
  }
  static std::int64_t cdiv(std::int64_t a, std::int64_t b) { return -(-a / b); }

 protected:
  ~Program() = default;
};

/// A kernel: a plain function (or a function object, for one a plugin file declares).
using KernelFn = std::function<void(Program& tl, const Args& args)>;

// --- inline definitions ---

inline std::string_view math_op_name(MathOp op) noexcept {
  static constexpr std::string_view names[] = {
      "exp",     "log",     "sqrt", "abs",   "sigmoid", "cos",     "sin", "relu", "add", "sub",     "mul",  "div",
      "maximum", "minimum", "fma",  "clamp", "where",   "softmax", "sum", "max",  "min", "dequant", "bias", "scale"};
  const auto i = static_cast<std::size_t>(op);
  return i < std::size(names) ? names[i] : "?";
}

inline std::span<const std::byte> Tensor::bytes() const {
  if (d_.pending)
    throw Error("the values of a compute result are not available in the timing pass (shape " + d_.shape.str() +
                "); they are computed by the data pass");
  if (!d_.data) throw Error("tensor " + d_.shape.str() + " has no data (a ref is not loaded)");
  return {d_.data->data(), d_.data->size()};
}

inline double Tensor::item(std::int64_t i) const {
  auto b = bytes();
  std::size_t size = dtype_size(d_.dtype);
  if (i < 0 || static_cast<std::size_t>(i + 1) * size > b.size())
    throw Error("element " + std::to_string(i) + " is out of range for shape " + d_.shape.str());
  return decode_value(b.data() + static_cast<std::size_t>(i) * size, d_.dtype);
}

inline Tensor operator+(const Tensor& a, const Tensor& b) { return a.ctx_->binary(MathOp::kAdd, a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return a.ctx_->binary(MathOp::kSub, a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return a.ctx_->binary(MathOp::kMul, a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return a.ctx_->binary(MathOp::kDiv, a, b); }

inline Tensor Program::trans(const Tensor& x) {
  Tensor::Desc d = x.desc();
  if (d.shape.rank() < 2) throw Error("trans needs at least 2 dimensions, got " + d.shape.str());
  std::swap(d.shape[d.shape.rank() - 1], d.shape[d.shape.rank() - 2]);
  d.transposed = !d.transposed;
  return Tensor(this, std::move(d));
}

inline Tensor Program::reshape(const Tensor& x, const Shape& shape) {
  Tensor::Desc d = x.desc();
  if (shape.elements() != d.shape.elements())
    throw Error("reshape: " + d.shape.str() + " has " + std::to_string(d.shape.elements()) + " elements, " +
                shape.str() + " " + std::to_string(shape.elements()));
  if (d.transposed || d.loaded_row_stride != 0)
    throw Error("reshape: a tl.trans view or a 2-D load's block is not in row-major order in memory");
  d.shape = shape;
  return Tensor(this, std::move(d));
}

}  // namespace kbsim::tl
