// The host runtime API (docs/model.md, "The host runtime"): what a bench uses
// to place tensors on a device, move their data, launch kernels and collect
// results. It talks to the simulated system only through its entry components:
// PCIE_EP for memory traffic and IO_CPU for launches and MMU mappings.
//
//   auto& rt = ctx.configured().service<kbsim::rt::Runtime>();
//   auto a = rt.from_host({M, K}, DType::kF16, a_values, {.pe = Split::kReplicate, .num_pes = 1});
//   auto h = rt.launch("my-kernel", {a, b, out, M, K, N});
//   const LaunchResult& r = rt.wait(h);
//   {
//     TensorScope scope(rt);  // frees every tensor made while it lives
//     auto tmp = rt.empty({M, N}, DType::kF32);
//     rt.copy(tmp, a);
//   }
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "kbsim/ahbm/host_command.hpp"
#include "kbsim/bench.hpp"
#include "kbsim/services.hpp"
#include "kbsim/tl/dtype.hpp"
#include "kbsim/tl/tl.hpp"

namespace kbsim::rt {

/// How a 2-D tensor is split over cubes, then over the PEs of each cube (docs/model.md, "The host runtime").
/// The tiled kinds cut it into a grid of r x c blocks (r * c = the parts, r the largest divisor of the parts
/// not above its square root, so c >= r) and hand the blocks out in row-major or column-major grid order.
enum class Split : std::uint8_t { kReplicate, kColumnWise, kRowWise, kTiledRowMajor, kTiledColumnMajor };

/// Where a tensor's shards are stored: each in its PE's HBM slice, or in its PE's allocatable TCM (the part above the
/// scheduler-reserved TCM; docs/model.md, "The host runtime", "TCM tensors"). The kernel API's memory spaces, of
/// which the host runtime places tensors in kHbm and kTcm (another is BAD_USE).
using Space = tl::Space;

struct DPPolicy {
  Split cube = Split::kReplicate;
  Split pe = Split::kReplicate;
  unsigned num_pes = 1;    ///< PEs per cube used (0 = all of the cube's PEs)
  unsigned num_cubes = 1;  ///< cubes of the SIP used (0 = all)
  Space space = Space::kHbm;
};

/// One placed piece of a tensor.
struct ShardSpec {
  unsigned sip = 0, cube = 0, pe = 0;
  std::uint64_t offset_bytes = 0;  ///< byte offset of the shard's first element in the row-major tensor
  std::uint64_t nbytes = 0;
  Shape shape;           ///< the shard's own shape (stored contiguously)
  std::uint64_t va = 0;  ///< virtual address of the shard
  std::uint64_t pa = 0;  ///< physical address of its storage (the PE's HBM slice, or its TCM: DPPolicy::space)
};

class Runtime;

/// A host-side tensor handle. Cheap to copy; the runtime owns the placement.
class Tensor {
 public:
  struct Info {
    std::string name;
    Shape shape;
    DType dtype = DType::kF16;
    DPPolicy policy;
    std::uint64_t va = 0;        ///< base of its page-aligned virtual range
    std::uint64_t va_bytes = 0;  ///< length of the virtual range (pages)
    std::vector<ShardSpec> shards;
    bool freed = false;
  };
  Tensor() = default;
  explicit Tensor(std::shared_ptr<Info> info) : info_(std::move(info)) {}

  const std::string& name() const { return info().name; }
  const Shape& shape() const { return info().shape; }
  DType dtype() const { return info().dtype; }
  std::uint64_t va() const { return info().va; }
  std::uint64_t nbytes() const { return static_cast<std::uint64_t>(shape().elements()) * dtype_size(dtype()); }
  const std::vector<ShardSpec>& shards() const { return info().shards; }
  const DPPolicy& policy() const { return info().policy; }
  bool valid() const noexcept { return info_ != nullptr; }
  const Info& info() const {
    if (!info_) throw std::logic_error("use of an empty rt::Tensor");
    return *info_;
  }

 private:
  std::shared_ptr<Info> info_;
};

/// `kbsim run --device all|sip:N` (the host runtime's plugin declares it; docs/model.md "Devices"): the SIPs a
/// single-device bench runs on (Runtime::on_devices).
inline constexpr StringParam kDeviceFlag{
    "device", "sip:0",
    "the SIPs a single-device bench runs on: sip:N, or all (once per SIP, concurrently in one simulation, results "
    "per SIP); benches that choose their own SIPs (collectives) ignore it"};

/// A rectangle of a tensor's (rows, cols) view: rows [row, row + rows), columns [col, col + cols). A rank-1 tensor
/// is one row.
struct Region {
  std::int64_t row = 0, col = 0, rows = 1, cols = 1;
};

/// A kernel argument: a tensor, an integer or a real.
using Arg = std::variant<Tensor, std::int64_t, double>;

struct LaunchOptions {
  static constexpr unsigned kCurrentDevice = ~0u;
  unsigned sip = kCurrentDevice;  ///< the SIP; kCurrentDevice = the caller's device (set_device)
  /// The PEs the kernel runs on: cubes 0..grid_cubes-1 x PEs 0..grid_pes-1 of
  /// each. 0 = the largest placement among the tensor arguments.
  unsigned grid_pes = 0, grid_cubes = 0;
  /// Rewrite an integer argument equal to a tensor argument's global dim into that dim's local size (the
  /// tensor's first shard's), as the reference's launch does; kernels written for local dims then take the
  /// global ones. A value only matches dims the placement changes, the first tensor argument having it decides.
  /// Off: integers pass exactly as given (docs/model.md, "The host runtime", "Launch arguments").
  bool auto_dim_remap = true;
  /// When PEs fail: kFailFast (the reference's default) completes the launch, failed, with the first failure to
  /// reach IO_CPU; kCollectAll waits for every PE and names every failed one (docs/model.md, "Host commands and the
  /// launch barrier").
  ahbm::FailurePolicy failure_policy = ahbm::FailurePolicy::kFailFast;
};

struct LaunchHandle {
  std::uint64_t id = 0;
};

struct LaunchResult {
  std::string kernel;
  ahbm::Completion completion;
  Tick t_submit = 0, t_done = 0;
  double pe_exec_ns = 0, dma_ns = 0, compute_ns = 0;  ///< maxima over the PEs (merged by M_CPU and IO_CPU)
  std::vector<ahbm::PeResult> pes;                    ///< sorted by (sip, cube, pe)
};

/// Timing of a host memory transfer.
struct TransferResult {
  ahbm::Completion completion;
  Tick t_submit = 0, t_done = 0;
  std::uint64_t bytes = 0;
};

/// A service of the configured system (provided by the host_runtime plugin):
///   auto& rt = ctx.configured().service<kbsim::rt::Runtime>();
class Runtime : public Service {
 public:
  static constexpr std::string_view kServiceName = "host_runtime";

  // --- tensors (each submits its MMU mappings over the fabric) ---
  virtual Tensor empty(const Shape& shape, DType dtype, const DPPolicy& dp = {}, std::string name = {}) = 0;
  /// empty + a MemoryWrite of zeros to every shard.
  virtual Tensor zeros(const Shape& shape, DType dtype, const DPPolicy& dp = {}, std::string name = {}) = 0;
  /// empty + the host's values written to every shard (values converted to `dtype`).
  virtual Tensor from_host(const Shape& shape, DType dtype, std::span<const double> values, const DPPolicy& dp = {},
                           std::string name = {}) = 0;
  /// Unmap and free a tensor's memory.
  virtual void free(Tensor& t) = 0;

  // --- data (through PCIE_EP and the memory path; blocking) ---
  /// Write raw bytes of the whole tensor (row-major, tensor.nbytes() long).
  virtual TransferResult write(const Tensor& t, std::span<const std::byte> bytes) = 0;
  /// Read the whole tensor back (row-major bytes; replicated tensors: the first replica), once the launches
  /// still running on its SIP have finished (they may write it).
  virtual std::vector<std::byte> read(const Tensor& t, TransferResult* timing = nullptr) = 0;
  std::vector<double> read_values(const Tensor& t) {
    std::vector<std::byte> b = read(t);
    std::vector<double> v(b.size() / dtype_size(t.dtype()));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = decode_value(b.data() + i * dtype_size(t.dtype()), t.dtype());
    return v;
  }
  /// Copy `src` into `dst` (same shape and dtype, any placements): a host read of `src` (after the launches
  /// running on its SIP) then a write of those bytes with `dst`'s placement. Timing: the read's submission to
  /// the write's acknowledgement; bytes: those written.
  virtual TransferResult copy(const Tensor& dst, const Tensor& src) = 0;
  /// A printable summary, read back as read() does: name, shape, dtype, placement and the row-major values
  /// (the first and last 3 around "..." past 6, as numpy abbreviates).
  virtual std::string summary(const Tensor& t) = 0;
  /// The values of `region`, row-major, read back as read() does (after the launches running on the tensor's SIP),
  /// only the region's bytes: one request per row. The region must lie in one shard: NOT_SUPPORTED otherwise (as
  /// the reference's slices), BAD_USE if it leaves the tensor.
  virtual std::vector<double> read_slice(const Tensor& t, const Region& region) = 0;
  /// Write `values` (region.rows x region.cols, row-major; or one value, written to every element) into `region`
  /// of every replica of the shard holding it: one write request per row and replica. The same rules as read_slice.
  virtual TransferResult write_slice(const Tensor& t, const Region& region, std::span<const double> values) = 0;

  // --- kernels ---
  /// Submit a launch of a registered kernel to IO_CPU (non-blocking).
  virtual LaunchHandle launch(std::string_view kernel, std::vector<Arg> args, const LaunchOptions& opt = {}) = 0;
  /// Run the simulation until the launch completes; a failed kernel throws SimError.
  virtual const LaunchResult& wait(LaunchHandle h) = 0;
  virtual void wait_all() = 0;
  /// Launches and transfers submitted so far.
  virtual std::uint64_t submitted() const noexcept = 0;

  // --- the device ---
  /// The SIP the caller's tensors are placed on and its kernels launched on by
  /// default (in a spawn worker: that worker's; elsewhere: the driver's; initially 0).
  virtual void set_device(unsigned sip) = 0;
  virtual unsigned current_device() const = 0;
  virtual System& system() = 0;
  virtual Tick now() const = 0;
  virtual unsigned cubes_per_sip() const = 0;
  virtual unsigned pes_per_cube() const = 0;
  /// Run a single-device bench's `body` on the SIPs `--device` selects (kDeviceFlag). sip:N: once, with SIP N
  /// current, on `ctx` itself. all: once per SIP, each on its own worker (as Distributed::spawn runs them) with
  /// its SIP current, concurrently in simulated time on this one system; each gets a view of `ctx` whose metrics
  /// are results.json's `devices.sipN`, whose notes start "sip N: " and whose files start "sipN-".
  virtual void on_devices(BenchContext& ctx, const std::function<void(BenchContext&)>& body) = 0;

  // --- scopes (TensorScope) ---
  /// Start collecting, into `made`, the tensors the caller (the driver or a spawn worker) creates from now on.
  virtual void open_scope(std::vector<Tensor>& made) = 0;
  /// Stop collecting into `made` (the caller's scope opened with it).
  virtual void close_scope(std::vector<Tensor>& made) = 0;
};

/// Frees, when it ends, every tensor its caller created while it lived and has not freed (newest first):
///   { TensorScope scope(rt); auto t = rt.empty(...); ... }  // t is freed here
/// Scopes nest (a tensor belongs to the innermost); each spawn worker has its own. Ending through an
/// exception frees nothing (the run is failing; freeing drives the simulation).
class TensorScope {
 public:
  explicit TensorScope(Runtime& rt) : rt_(rt), unwinding_(std::uncaught_exceptions()) { rt_.open_scope(made_); }
  TensorScope(const TensorScope&) = delete;
  TensorScope& operator=(const TensorScope&) = delete;
  ~TensorScope() noexcept(false) {
    rt_.close_scope(made_);
    if (std::uncaught_exceptions() > unwinding_) return;
    for (auto it = made_.rbegin(); it != made_.rend(); ++it)
      if (!it->info().freed) rt_.free(*it);
  }
  /// The tensors it collected so far (freed ones included).
  const std::vector<Tensor>& tensors() const noexcept { return made_; }

 private:
  Runtime& rt_;
  int unwinding_;  ///< uncaught exceptions when it began
  std::vector<Tensor> made_;
};

}  // namespace kbsim::rt
