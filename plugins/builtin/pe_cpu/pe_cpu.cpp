// builtin.pe_cpu: the PE's control CPU (docs/model.md,
// "Kernels, launch and results"). It runs a launched kernel at the launch's
// start time, on a fiber (Boost.Context), as this PE's tl::Program: every tl
// call that issues a command sends a pe::Command to the PE_SCHEDULER and
// suspends the kernel until the command comes back done, so kernel code stays
// sequential while simulated time runs. Fibers are resumed only from this
// component's handlers, so the kernels of many PEs interleave deterministically
// on one thread.
//
// Timing pass (docs/model.md, "The two-pass data model"): tl.load returns the
// bytes read from the memory store at the DMA's physical address; tl.store
// writes known bytes at issue, through the PE_MMU; compute results are pending.
// Each command carries a DataOp (data_ops.hpp) saying what the data pass
// computes for it. Launches that arrive while a kernel runs wait for it (FIFO).
#include <exception>
#include <map>
#include <set>

#include "data_ops.hpp"
#include "kbsim/ahbm/host_command.hpp"
#include "kbsim/ahbm/names.hpp"
#include "kbsim/ahbm/phys_addr.hpp"
#include "kbsim/fiber.hpp"
#include "kbsim/fifo.hpp"
#include "kbsim/free_list.hpp"
#include "kbsim/pe/command.hpp"
#include "kbsim/pe/ipcq.hpp"
#include "kbsim/pe/kernels.hpp"
#include "kbsim/pe/memory_store.hpp"
#include "kbsim/pe/tcm.hpp"
#include "kbsim/plugin.hpp"
#include "kbsim/waiting.hpp"

namespace {

namespace bctx = boost::context;
namespace pe = kbsim::pe;
namespace tl = kbsim::tl;
using kbsim::DType;
using kbsim::Ref;
using kbsim::Shape;
using kbsim::Tick;
using kbsim::ahbm::hex;
using kbsim::ahbm::HostCommand;
using pe::StageType;
using pe_cpu::DataOps;

constexpr kbsim::FloatParam kDispatchNs{"dispatch_ns", 0.0,
                                        "dispatch cost of each command a kernel issues, paid before it"};
constexpr kbsim::FloatParam kClockGhz{"clock_ghz", 1.0, "clock of tl.cycles(n): n / clock_ghz ns"};
constexpr kbsim::IntParam kStackKib{"stack_kib", 256, "stack of each kernel's fiber"};
constexpr kbsim::IntParam kScratchKib{"scratch_kib", 1024,
                                      "TCM scratch per kernel run for compute results and constants"};
constexpr kbsim::NodeParam kScheduler{"scheduler", "pe_scheduler",
                                      "its PE's scheduler (in the PE template, a component name means that sibling)"};
constexpr kbsim::NodeParam kMmu{"mmu", "pe_mmu", "its PE's MMU; empty: virtual addresses are physical"};
constexpr kbsim::NodeParam kGemm{"gemm", "pe_gemm", "its PE's GEMM engine, which may compute GEMM values itself"};
constexpr kbsim::NodeParam kIpcq{"ipcq", "pe_ipcq", "its PE's inter-PE queues (tl.send / tl.recv); empty: none"};
constexpr kbsim::NodeParam kTcm{
    "tcm", "pe_tcm", "its PE's TCM, whose reserved part its scratch must fit in (the host allocates above it)"};

/// Thrown inside the fiber out of the tl call that was waiting when a command
/// failed. Not a std::exception, so a kernel catching those does not absorb it.
struct CommandFailed {};

std::string ns(Tick t) {
  std::string s = std::to_string(kbsim::ticks_to_ns(t));
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string shapes(std::span<const tl::Tensor> in) {
  std::string s;
  for (const tl::Tensor& t : in) s += (s.empty() ? "" : ", ") + t.shape().str();
  return s;
}

class PeCpu final : public kbsim::Component, public kbsim::Waiting, private tl::Program {
 public:
  using Component::send;  // beside tl.send
  explicit PeCpu(const kbsim::ComponentContext& ctx)
      : Component(ctx),
        dispatch_(kbsim::ns_to_ticks(params().get(kDispatchNs))),
        clock_ghz_(params().get(kClockGhz)),
        stack_bytes_(static_cast<std::size_t>(params().get(kStackKib)) * 1024),
        scratch_bytes_(static_cast<std::uint64_t>(params().get(kScratchKib)) * 1024),
        launches_(stat(kStatLaunches)),
        commands_(stat(kStatCommands)),
        kernel_ns_(stat(kStatKernelNs)),
        ipcq_calls_(stat(kStatIpcqCalls)) {
    params().check(params().get(kDispatchNs) >= 0, kDispatchNs, "must be >= 0");
    params().check(clock_ghz_ > 0, kClockGhz, "must be > 0");
    params().check(params().get(kStackKib) >= 16, kStackKib, "must be >= 16");
    params().check(params().get(kScratchKib) >= 0, kScratchKib, "must be >= 0");
  }

  /// A kernel still waiting (a run that stopped or got stuck) unwinds from its wait, on its own stack.
  ~PeCpu() override {
    if (!fiber_) return;
    cancelled_ = true;
    switch_in();
  }

  // Statistics, declared once: info() lists them, stat() binds them.
  static constexpr kbsim::StatDef kStatLaunches{"launches", kbsim::StatKind::kCounter, "kernels",
                                                "kernel runs started"};
  static constexpr kbsim::StatDef kStatCommands{"commands", kbsim::StatKind::kCounter, "commands",
                                                "PE commands issued by kernels"};
  static constexpr kbsim::StatDef kStatKernelNs{"kernel_ns", kbsim::StatKind::kValue, "ns",
                                                "kernel run time (start barrier to return), summed"};

  static constexpr kbsim::StatDef kStatIpcqCalls{"ipcq_calls", kbsim::StatKind::kCounter, "calls",
                                                 "tl.send / tl.recv calls issued by kernels"};

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "pe_cpu";
    i.summary = "PE control CPU: runs launched kernels (tl API) on fibers, issuing commands to the PE scheduler";
    i.params = {kDispatchNs, kClockGhz, kStackKib, kScratchKib, kScheduler, kMmu, kGemm, kIpcq, kTcm};
    i.ports = {{"command", "to and from its PE's router: launches from the M_CPU and their answers",
                kbsim::message_types<HostCommand>()},
               {"pe_internal", "to and from the PE scheduler and the PE_IPCQ: PE commands, IPCQ calls and results",
                kbsim::message_types<pe::Command, pe::IpcqCall>()}};
    i.stats = {kStatLaunches, kStatCommands, kStatKernelNs, kStatIpcqCalls};
    return i;
  }

  void setup() override {
    const auto pe = kbsim::ahbm::pe_of(id());
    if (!pe) fail("a pe_cpu must be part of a PE (sip{S}.cube{C}.pe{P}.pe_cpu)");
    self_ = *pe;
    const kbsim::NodeIndex scheduler = params().get(kScheduler);
    if (scheduler == kbsim::kNoNode) fail("needs a PE scheduler (parameter 'scheduler')");
    scheduler_ = out_port_to(scheduler);
    if (scheduler_ == kbsim::kNoPort) fail("has no pe_internal link to " + std::string(node_id(scheduler)));
    const kbsim::NodeIndex mmu = params().get(kMmu);
    mmu_ = mmu == kbsim::kNoNode ? nullptr : kbsim::ahbm::as_translator(peer(mmu));  // none: VAs are physical
    ops_ = DataOps(mmu_);
    memory_view_ = find_view("memory");
    memory_ = &service<kbsim::MemoryStore>();
    kernels_ = &service<kbsim::KernelCatalogue>();
    gemm_engine_ = params().get(kGemm);
    if (const kbsim::NodeIndex q = params().get(kIpcq); q != kbsim::kNoNode) {
      ipcq_ = kbsim::pe::as_ipcq(peer(q));
      to_ipcq_ = out_port_to(q);
      if (!ipcq_ || to_ipcq_ == kbsim::kNoPort)
        fail("its 'ipcq' parameter names " + std::string(node_id(q)) +
             ", which is not a PE_IPCQ reached by a pe_internal link");
    }
    scratch_base_ = kbsim::ahbm::pe_tcm_addr(self_.sip, self_.cube, self_.pe, 0);
    if (const kbsim::NodeIndex t = params().get(kTcm); t != kbsim::kNoNode)
      if (const kbsim::pe::TcmLayout* tcm = kbsim::pe::as_tcm_layout(peer(t));
          tcm && scratch_bytes_ > tcm->reserved_bytes())
        fail("scratch_kib (" + std::to_string(scratch_bytes_ / 1024) + " KiB) exceeds the reserved part of " +
             std::string(node_id(t)) + " (reserved_kib " + std::to_string(tcm->reserved_bytes() / 1024) +
             "): tensors the host places in the TCM would overlap kernel scratch");
  }

  void on_message(kbsim::PortIndex, Ref<kbsim::Message> msg) override {
    if (msg->is<pe::Command>()) return completed(msg->as<pe::Command>());
    if (msg->is<pe::IpcqCall>()) {
      const pe::IpcqCall& c = msg->as<pe::IpcqCall>();
      return settle(c.id, c.ok, c.error);
    }
    if (!msg->is<HostCommand>()) fail("received a message that is neither a launch nor a PE command");
    auto& leg = msg->as<HostCommand>();
    if (leg.is_response || leg.kind != HostCommand::Kind::kLaunch)
      fail("received a host command that is not a kernel launch (MMU updates go to the pe_mmu)");
    if (!kernels_->find(leg.kernel)) fail("unknown kernel '" + leg.kernel + "'");
    if (leg.has_start && leg.target_start < now())
      fail("kernel '" + leg.kernel + "': the launch missed its start barrier by " + ns(now() - leg.target_start) +
           " ns (start at " + ns(leg.target_start) + " ns)");
    queue_.emplace_back(&leg);
    if (!launch_) next_launch();
  }

  void on_timer(std::uint64_t tag, Ref<kbsim::Message>) override {
    if (tag == kWake) return resume();
    start_ = now();
    ++launches_.count;
    run_ = Run{};
    run_.scratch = kbsim::FreeList(0, scratch_bytes_, 16);
    fiber_ = bctx::fiber(std::allocator_arg, kbsim::fiber::RecordingStack{bctx::fixedsize_stack(stack_bytes_), &stack_},
                         [this](bctx::fiber&& main) {
                           kbsim::fiber::finish_switch(nullptr, &main_stack_);
                           main_ = std::move(main);
                           try {
                             static const tl::Args kNoArgs;
                             kernels_->find(launch_->kernel)(*this, launch_->args ? *launch_->args : kNoArgs);
                             wait();  // the kernel ends when its composites do
                           } catch (const bctx::detail::forced_unwind&) {
                             throw;  // the fiber is being destroyed: let Boost.Context unwind it
                           } catch (...) {
                             run_.error = std::current_exception();
                           }
                           kbsim::fiber::start_switch(nullptr, main_stack_);
                           return std::move(main_);
                         });
    resume();
  }

 private:
  enum Tag : std::uint64_t { kStart, kWake };

  /// State of one kernel run.
  struct Run {
    kbsim::FreeList scratch{0, 0, 16};                                              ///< set as the kernel starts
    std::map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> scratch_live;  ///< offset -> bytes, its id
    std::uint64_t scratch_ids = 0;
    std::map<std::uint64_t, std::string> in_flight;  ///< command id -> the tl call, for errors
    std::set<std::uint64_t> composites;              ///< open composite handles
    std::array<Tick, pe::kStageTypes> busy{};
    Tick composite_first = kbsim::kNever, composite_last = 0;
    std::uint64_t commands = 0;
    bool waiting = false;                                ///< suspended until a command completes (not on a timer)
    Tick since = 0;                                      ///< when it last started waiting
    std::vector<std::pair<std::string, Tick>> phases;    ///< tl.phase marks
    std::map<std::uint64_t, Ref<pe::IpcqCall>> futures;  ///< recv_async calls not yet waited for
    kbsim::EventId wake;
    std::string failure;  ///< the first failed command
    std::exception_ptr error;
  };

  void next_launch() {
    if (queue_.empty()) return;
    launch_ = std::move(queue_.front());
    queue_.pop_front();
    Tick at = launch_->has_start ? std::max(launch_->target_start, now()) : now();
    schedule(at - now(), kStart);
  }

  // --- the fiber bridge ---

  /// Continue the kernel until it next waits; handle its end.
  void resume() {
    switch_in();
    while (fiber_ && outside_) {  // the kernel asked for something run on this stack (outside())
      const std::function<void()> fn = std::exchange(outside_, nullptr);
      try {
        fn();
      } catch (...) {
        outside_error_ = std::current_exception();
      }
      switch_in();
    }
    if (!fiber_) finished();
  }
  /// (In the kernel) hand control back to the event loop until resumed.
  void suspend() {
    kbsim::fiber::start_switch(&fiber_fake_, main_stack_);
    main_ = std::move(main_).resume();
    kbsim::fiber::finish_switch(fiber_fake_, &main_stack_);
    alive();
  }
  /// Switch into the kernel until it waits again or ends.
  void switch_in() {
    kbsim::fiber::start_switch(&main_fake_, stack_);
    fiber_ = std::move(fiber_).resume();
    kbsim::fiber::finish_switch(main_fake_, nullptr);
  }
  /// (In the kernel) stop here if a command failed or the component is going away.
  void alive() const {
    if (cancelled_ || !run_.failure.empty()) throw CommandFailed{};
  }
  void sleep(Tick t) {
    alive();
    run_.wake = schedule(t, kWake);
    suspend();
  }
  void await_completion() {
    run_.since = now();
    run_.waiting = true;
    suspend();
    run_.waiting = false;
  }

  void completed(pe::Command& cmd) {
    if (!cmd.done || !run_.in_flight.count(cmd.id)) fail("a PE command came back that no running kernel waits for");
    for (std::size_t s = 0; s < pe::kStageTypes; ++s) run_.busy[s] += cmd.busy[s];
    if (cmd.is_composite()) {
      run_.composite_first = std::min(run_.composite_first, cmd.t_first);
      run_.composite_last = std::max(run_.composite_last, cmd.t_last);
      run_.composites.erase(cmd.id);
    }
    settle(cmd.id, cmd.ok, cmd.error);
  }

  /// Call `id` (a command or an IPCQ call) came back; resume a kernel waiting for it.
  void settle(std::uint64_t id, bool ok, const std::string& error) {
    auto it = run_.in_flight.find(id);
    if (it == run_.in_flight.end()) fail("a call came back that no running kernel waits for");
    if (!ok && run_.failure.empty()) run_.failure = "kernel '" + launch_->kernel + "': " + it->second + ": " + error;
    run_.in_flight.erase(it);
    if (!run_.failure.empty()) cancel(run_.wake);
    if (run_.waiting || !run_.failure.empty()) resume();
  }

  void finished() {
    const std::string& name = launch_->kernel;
    if (!run_.failure.empty()) fail(run_.failure);
    if (run_.error) {
      try {
        std::rethrow_exception(std::exchange(run_.error, nullptr));
      } catch (const tl::Error& e) {
        fail("kernel '" + name + "' threw: " + e.what());
      } catch (const kbsim::Error&) {
        throw;  // a simulation error raised by a tl call names itself
      } catch (const std::exception& e) {
        fail("kernel '" + name + "' threw: " + e.what());
      } catch (...) {
        fail("kernel '" + name + "' threw an exception that is not a std::exception");
      }
    }
    auto busy = [&](StageType t) { return kbsim::ticks_to_ns(run_.busy[static_cast<std::size_t>(t)]); };
    kbsim::ahbm::PeResult r;
    r.pe = self_;
    r.start = start_;
    r.end = now();
    r.pe_exec_ns = kbsim::ticks_to_ns(now() - start_);
    r.dma_ns = busy(StageType::kDmaRead) + busy(StageType::kDmaWrite);
    r.compute_ns = busy(StageType::kGemm) + busy(StageType::kMath);
    for (std::size_t s = 0; s < pe::kStageTypes; ++s) r.stage_busy_ns[s] = busy(static_cast<StageType>(s));
    r.composite_first = run_.composite_first;
    r.composite_last = run_.composite_last;
    r.commands = run_.commands;
    r.phases = std::move(run_.phases);
    kernel_ns_.value += r.pe_exec_ns;

    Ref<HostCommand> answer = std::move(launch_);
    answer->pe_exec_ns = r.pe_exec_ns;
    answer->dma_ns = r.dma_ns;
    answer->compute_ns = r.compute_ns;
    answer->results = {r};
    answer->is_response = true;
    answer->bytes = 0;
    const kbsim::Route& back = route_to(answer->initiator, memory_view_);
    answer->route = &back;
    send(back.ports.front(), std::move(answer));
    next_launch();
  }

  // --- issuing commands (in the kernel) ---

  Ref<pe::Command> issue(Ref<pe::Command> cmd, std::string call) {
    alive();
    if (dispatch_ > 0) sleep(dispatch_);
    cmd->id = ++next_id_;
    cmd->reply_to = index();
    cmd->bytes = 0;
    run_.in_flight.emplace(cmd->id, std::move(call));
    ++run_.commands;
    ++commands_.count;
    send(scheduler_, cmd);
    return cmd;
  }
  /// Issue a one-stage command and wait for it.
  Ref<pe::Command> run(pe::CommandKind kind, pe::Stage stage, std::string call,
                       std::shared_ptr<kbsim::DataOp> data = nullptr) {
    Ref<pe::Command> cmd = kbsim::make_message<pe::Command>();
    cmd->kind = kind;
    cmd->stage = stage;
    cmd->data = std::move(data);
    cmd->stage.composite = false;
    issue(cmd, std::move(call));
    while (!cmd->done) await_completion();
    return cmd;
  }

  /// TCM scratch for a result or a constant: the first free block that fits, in 16-byte granules (a kernel that
  /// frees nothing gets consecutive addresses).
  std::pair<std::uint64_t, std::uint64_t> scratch(std::uint64_t nbytes) {
    const std::uint64_t size = std::max<std::uint64_t>(nbytes, 1);  // (an empty result still has an address)
    const std::optional<std::uint64_t> at = run_.scratch.allocate(size);
    if (!at)
      throw tl::Error("TCM scratch exhausted: " + std::to_string(nbytes) + " bytes more do not fit in " +
                      std::to_string(scratch_bytes_) + " (pe_cpu.scratch_kib; the largest free block is " +
                      std::to_string(run_.scratch.largest_free()) + " bytes; tl.free what a loop no longer needs)");
    run_.scratch_live.emplace(*at, std::pair{size, ++run_.scratch_ids});
    return {scratch_base_ + *at, run_.scratch_ids};
  }

  void free(const tl::Tensor& t) override {
    alive();
    const std::uint64_t at = t.addr() - scratch_base_;
    auto live = run_.scratch_live.find(at);
    if (t.desc().scratch_id == 0 || live == run_.scratch_live.end() || live->second.second != t.desc().scratch_id)
      throw tl::Error("tl.free(" + t.shape().str() +
                      "): not a compute result or constant this kernel run still "
                      "holds (freed already, or loaded or received: those take no scratch)");
    run_.scratch.release(at, live->second.first);
    run_.scratch_live.erase(live);
  }
  tl::Tensor pending(const Shape& shape, DType dtype) {
    std::uint64_t bytes = static_cast<std::uint64_t>(shape.elements()) * kbsim::dtype_size(dtype);
    const auto [addr, id] = scratch(bytes);
    tl::Tensor::Desc d{shape, dtype, addr, tl::Space::kTcm, false, true, nullptr};
    d.scratch_id = id;
    return tl::Tensor(this, std::move(d));
  }
  static void need_tcm(const std::string& call, const tl::Tensor& t) {
    if (t.space() != tl::Space::kTcm)
      throw tl::Error(call + ": operand " + t.shape().str() + " is a ref in HBM; tl.load it first");
  }
  /// A physical `space` address for `shape` x `dtype`: in this PE's TCM, or in a cube's SRAM.
  void need_address(const std::string& call, std::uint64_t addr, const Shape& shape, DType dtype,
                    tl::Space space) const {
    namespace ahbm = kbsim::ahbm;
    const std::uint64_t nbytes = static_cast<std::uint64_t>(shape.elements()) * kbsim::dtype_size(dtype);
    const ahbm::DecodeResult r = ahbm::decode(addr);
    const ahbm::Decoded& a = r.addr;
    const bool fits = r.ok && a.offset + nbytes <= a.budget;
    if (space == tl::Space::kTcm) {
      if (!fits || a.kind != ahbm::AddrKind::kPeLocal || a.sub != static_cast<unsigned>(ahbm::PeSub::kTcm) ||
          a.sip != self_.sip || a.die != self_.cube || a.pe != self_.pe)
        throw tl::Error(call + ": " + hex(addr) + " (" + std::to_string(nbytes) + " bytes) is not in this PE's TCM (" +
                        std::string(kbsim::ahbm::names::pe(self_.sip, self_.cube, self_.pe)) +
                        "; kbsim::ahbm::pe_tcm_addr)");
    } else if (space == tl::Space::kSram) {
      if (!fits || a.kind != ahbm::AddrKind::kCubeSram)
        throw tl::Error(call + ": " + hex(addr) + " (" + std::to_string(nbytes) +
                        " bytes) is not a cube-SRAM address (kbsim::ahbm::cube_sram_addr)");
    }
  }

  /// Write `data` at virtual address `va`, translated piece by piece through the PE_MMU.
  void write_virtual(std::uint64_t va, std::span<const std::byte> data) {
    while (!data.empty()) {
      std::uint64_t pa = va, n = data.size();
      if (mmu_) {
        auto t = mmu_->translate(va);
        if (t.mapped) pa = t.pa;
        if (t.contiguous) n = std::min<std::uint64_t>(n, t.contiguous);
      }
      memory_->write(pa, data.first(n));
      va += n;
      data = data.subspan(n);
    }
  }

  // --- tl::Program ---

  void outside(const std::function<void()>& fn) override {
    alive();
    outside_ = fn;
    suspend();
    if (outside_error_) std::rethrow_exception(std::exchange(outside_error_, nullptr));
  }

  int program_id(int axis) const override {
    if (axis == 0) return static_cast<int>(self_.pe);
    if (axis == 1) return static_cast<int>(self_.cube);
    throw tl::Error("tl.program_id(" + std::to_string(axis) + "): the axes are 0 (PE in the cube) and 1 (cube)");
  }
  int num_programs(int axis) const override {
    if (axis == 0) return static_cast<int>(launch_->grid_pes);
    if (axis == 1) return static_cast<int>(launch_->grid_cubes);
    throw tl::Error("tl.num_programs(" + std::to_string(axis) + "): the axes are 0 (PE in the cube) and 1 (cube)");
  }

  tl::Tensor load(std::uint64_t ptr, const Shape& shape, DType dtype) override {
    std::uint64_t bytes = static_cast<std::uint64_t>(shape.elements()) * kbsim::dtype_size(dtype);
    auto cmd = run(pe::CommandKind::kDmaRead, {.type = StageType::kDmaRead, .addr = ptr, .nbytes = bytes},
                   "tl.load(" + hex(ptr) + ", " + shape.str() + ", " + std::string(kbsim::dtype_name(dtype)) + ")");
    auto data = std::make_shared<std::vector<std::byte>>(bytes);
    memory_->read(cmd->pa, *data);
    return tl::Tensor(this, {shape, dtype, ptr, tl::Space::kTcm, true, false, std::move(data), cmd->pa, now()});
  }

  void store(std::uint64_t ptr, const tl::Tensor& value) override {
    std::string call = "tl.store(" + hex(ptr) + ", " + value.shape().str() + ")";
    auto op = DataOps::make(kbsim::DataOp::Kind::kCopy, ops_.to_hbm(ptr, value.shape(), value.dtype(), call),
                            {ops_.operand(value, call)});
    if (!value.pending() && value.desc().data) {
      write_virtual(ptr, *value.desc().data);
      // A constant's bytes are a snapshot, visible at issue; a loaded tensor is read from memory as of its load
      // (what the timing pass loaded may predate a compute result the data pass stores there first), as send does.
      if (value.desc().loaded_at == kbsim::kNever) op->in.front().value = value.desc().data;
    }
    run(pe::CommandKind::kDmaWrite, {.type = StageType::kDmaWrite, .addr = ptr, .nbytes = value.nbytes()},
        std::move(call), std::move(op));
  }

  /// The bytes a 2-D DMA spans: `shape`'s rows `row_stride` elements apart (checked: a (rows, cols) block whose
  /// rows do not overlap).
  static std::uint64_t span_2d(const std::string& call, const Shape& shape, DType dtype, std::uint64_t row_stride) {
    if (shape.rank() != 2) throw tl::Error(call + ": a load or store with a row stride takes a (rows, cols) shape");
    if (row_stride < static_cast<std::uint64_t>(shape.cols()))
      throw tl::Error(call + ": the row stride " + std::to_string(row_stride) + " is less than the " +
                      std::to_string(shape.cols()) + " columns of a row");
    const std::uint64_t size = kbsim::dtype_size(dtype), rows = static_cast<std::uint64_t>(shape.rows());
    return rows == 0 ? 0 : ((rows - 1) * row_stride + static_cast<std::uint64_t>(shape.cols())) * size;
  }

  tl::Tensor load(std::uint64_t ptr, const Shape& shape, DType dtype, std::uint64_t row_stride) override {
    std::string call = "tl.load(" + hex(ptr) + ", " + shape.str() + ", " + std::string(kbsim::dtype_name(dtype)) +
                       ", row_stride=" + std::to_string(row_stride) + ")";
    const std::uint64_t span = span_2d(call, shape, dtype, row_stride);
    if (row_stride == static_cast<std::uint64_t>(shape.cols())) return load(ptr, shape, dtype);
    const std::uint64_t pa = ops_.physical(ptr, span, call), size = kbsim::dtype_size(dtype),
                        row_bytes = static_cast<std::uint64_t>(shape.cols()) * size,
                        bytes = row_bytes * static_cast<std::uint64_t>(shape.rows());
    // One descriptor: the DMA moves the block's bytes from the memory behind ptr, as a 1-D one of that size does.
    run(pe::CommandKind::kDmaRead, {.type = StageType::kDmaRead, .addr = ptr, .nbytes = bytes}, std::move(call));
    auto data = std::make_shared<std::vector<std::byte>>(bytes);
    for (std::uint64_t r = 0; r < static_cast<std::uint64_t>(shape.rows()); ++r)
      memory_->read(pa + r * row_stride * size, std::span(*data).subspan(r * row_bytes, row_bytes));
    tl::Tensor::Desc d{shape, dtype, ptr, tl::Space::kTcm, true, false, std::move(data), pa, now()};
    d.loaded_row_stride = row_stride * size;
    return tl::Tensor(this, std::move(d));
  }

  void store(std::uint64_t ptr, const tl::Tensor& value, std::uint64_t row_stride) override {
    std::string call =
        "tl.store(" + hex(ptr) + ", " + value.shape().str() + ", row_stride=" + std::to_string(row_stride) + ")";
    const std::uint64_t span = span_2d(call, value.shape(), value.dtype(), row_stride);
    if (row_stride == static_cast<std::uint64_t>(value.shape().cols())) return store(ptr, value);
    const std::uint64_t size = kbsim::dtype_size(value.dtype()),
                        row_bytes = static_cast<std::uint64_t>(value.shape().cols()) * size;
    kbsim::OpTensor out = ops_.to_hbm(ptr, {1, static_cast<std::int64_t>(span / size)}, value.dtype(), call);
    out.shape = value.shape();
    out.row_stride = row_stride * size;
    auto op = DataOps::make(kbsim::DataOp::Kind::kCopy, std::move(out), {ops_.operand(value, call)});
    if (!value.pending() && value.desc().data) {
      const std::span<const std::byte> bytes(*value.desc().data);
      for (std::uint64_t r = 0; r < static_cast<std::uint64_t>(value.shape().rows()); ++r)
        write_virtual(ptr + r * row_stride * size, bytes.subspan(r * row_bytes, row_bytes));
      if (value.desc().loaded_at == kbsim::kNever) op->in.front().value = value.desc().data;
    }
    run(pe::CommandKind::kDmaWrite, {.type = StageType::kDmaWrite, .addr = ptr, .nbytes = value.nbytes()},
        std::move(call), std::move(op));
  }

  tl::Tensor ref(std::uint64_t ptr, const Shape& shape, DType dtype) override {
    return tl::Tensor(this, {shape, dtype, ptr, tl::Space::kHbm, false, false, nullptr});
  }

  tl::Tensor dot(const tl::Tensor& a, const tl::Tensor& b) override {
    const Shape &sa = a.shape(), &sb = b.shape();
    std::string call = "tl.dot(" + sa.str() + ", " + sb.str() + ")";
    if (sa.rank() != 2 || sb.rank() != 2 || sa[1] != sb[0])
      throw tl::Error(call + ": the shapes do not multiply; (M, K) x (K, N) is needed");
    need_tcm(call, a);
    need_tcm(call, b);
    tl::Tensor out = pending({sa[0], sb[1]}, a.dtype());
    auto op =
        DataOps::make(kbsim::DataOp::Kind::kGemm, DataOps::to_tcm(out), {ops_.operand(a, call), ops_.operand(b, call)});
    op->engine = gemm_engine_;
    auto dim = [](std::int64_t d) { return static_cast<std::uint32_t>(d); };
    run(pe::CommandKind::kGemm, {.type = StageType::kGemm, .m = dim(sa[0]), .k = dim(sa[1]), .n = dim(sb[1])}, call,
        std::move(op));
    return out;
  }

  tl::Tensor math(tl::MathOp op, std::span<const tl::Tensor> in, int axis) override {
    using tl::MathOp;
    std::string call = "tl." + std::string(tl::math_op_name(op)) + "(" + shapes(in) + ")";
    if (op >= MathOp::kDequant) throw tl::Error(call + ": a GEMM epilogue op; give it in a composite's epilogue");
    std::size_t arity = op <= MathOp::kRelu || op >= MathOp::kSoftmax ? 1 : op <= MathOp::kMinimum ? 2 : 3;
    if (in.size() != arity)
      throw tl::Error(call + ": takes " + std::to_string(arity) + " input(s), got " + std::to_string(in.size()));
    for (const tl::Tensor& t : in) need_tcm(call, t);
    Shape out = in[0].shape();
    if (op >= MathOp::kSoftmax) {
      try {
        std::size_t a = out.index(axis);
        if (op != MathOp::kSoftmax) out[a] = 1;
      } catch (const std::invalid_argument& e) {
        throw tl::Error(call + ": " + e.what());
      }
    } else {
      // Elementwise: the inputs broadcast (docs/model.md, "The kernel API"): a single element goes with any
      // shape; shapes of one rank go together when each dimension is equal or 1 in one of them, e.g. scores
      // (M, N) minus their row maxima (M, 1).
      bool ok = true;
      for (const tl::Tensor& t : in) {
        const Shape& s = t.shape();
        if (s.elements() == 1) continue;
        if (out.elements() == 1) {
          out = s;
          continue;
        }
        ok = ok && s.rank() == out.rank();
        for (std::size_t d = 0; ok && d < s.rank(); ++d) {
          if (s[d] == out[d] || s[d] == 1) continue;
          ok = out[d] == 1;
          out[d] = s[d];
        }
      }
      if (!ok) throw tl::Error(call + ": elementwise inputs do not broadcast (each dimension equal, or 1)");
    }
    tl::Tensor result = pending(out, in[0].dtype());
    auto data = DataOps::make(kbsim::DataOp::Kind::kMath, DataOps::to_tcm(result));
    data->op = op;
    data->axis = axis;
    for (const tl::Tensor& t : in) data->in.push_back(ops_.operand(t, call));
    auto dim = [](std::int64_t d) { return static_cast<std::uint32_t>(d); };
    run(pe::CommandKind::kMath, {.type = StageType::kMath, .m = dim(out.rows()), .n = dim(out.cols()), .op = op}, call,
        std::move(data));
    return result;
  }

  tl::Handle composite(const tl::CompositeSpec& s) override {
    Ref<pe::Command> cmd = kbsim::make_message<pe::Command>();
    const Shape &sa = s.a.shape(), &sb = s.b.shape();
    auto size = [](DType t) { return static_cast<std::uint32_t>(kbsim::dtype_size(t)); };
    std::string call;
    if (s.op == tl::CompositeSpec::Op::kGemm) {
      call = "tl.composite(gemm, " + sa.str() + ", " + sb.str() + ")";
      if (sa.rank() != 2 || sb.rank() != 2 || sa[1] != sb[0])
        throw tl::Error(call + ": the shapes do not multiply; (M, K) x (K, N) is needed");
      cmd->kind = pe::CommandKind::kCompositeGemm;
      pe::GemmPlanSpec& g = cmd->gemm;
      g.m = static_cast<std::uint64_t>(sa[0]);
      g.k = static_cast<std::uint64_t>(sa[1]);
      g.n = static_cast<std::uint64_t>(sb[1]);
      g.tile_m = s.tile_m;
      g.tile_k = s.tile_k;
      g.tile_n = s.tile_n;
      g.a_addr = s.a.addr();
      g.b_addr = s.b.addr();
      g.out_addr = s.out_ptr;
      g.a_bytes = size(s.a.dtype());
      g.b_bytes = size(s.b.dtype());
      g.out_bytes = size(s.out_dtype);
      g.a_pinned = s.a.pinned();
      g.b_pinned = s.b.pinned();
      auto op = DataOps::make(kbsim::DataOp::Kind::kGemm, ops_.to_hbm(s.out_ptr, {sa[0], sb[1]}, s.out_dtype, call),
                              {ops_.operand(s.a, call), ops_.operand(s.b, call)});
      op->engine = gemm_engine_;
      for (const tl::Epilogue& e : s.epilogue) {
        g.epilogue.push_back({e.op, e.scope});
        int index = -1;
        if (e.operand.valid()) {
          index = static_cast<int>(op->in.size());
          op->in.push_back(ops_.operand(e.operand, call));
        }
        op->epilogue.push_back({e.op, e.scope, e.factor, index});
      }
      op->tile_k = s.tile_k;
      cmd->data = std::move(op);
    } else {
      call = "tl.composite(math " + std::string(tl::math_op_name(s.math_op)) + ", " + sa.str() + ")";
      if (s.math_op > tl::MathOp::kRelu) throw tl::Error(call + ": a composite math op is an elementwise unary op");
      if (sa.rank() == 0) throw tl::Error(call + ": operand a is missing");
      cmd->kind = pe::CommandKind::kCompositeMath;
      pe::MathPlanSpec& m = cmd->math;
      m.m = static_cast<std::uint64_t>(sa.rows());
      m.n = static_cast<std::uint64_t>(sa.cols());
      m.tile_m = s.tile_m;
      m.tile_n = s.tile_n;
      m.src_addr = s.a.addr();
      m.dst_addr = s.out_ptr;
      m.in_bytes = size(s.a.dtype());
      m.out_bytes = size(s.out_dtype);
      m.op = s.math_op;
      auto op = DataOps::make(kbsim::DataOp::Kind::kMath, ops_.to_hbm(s.out_ptr, sa, s.out_dtype, call),
                              {ops_.operand(s.a, call)});
      op->op = s.math_op;
      cmd->data = std::move(op);
    }
    issue(cmd, std::move(call));
    run_.composites.insert(cmd->id);
    return {cmd->id};
  }

  // --- IPCQ ---

  /// Issue an IPCQ call to this PE's queues (not waiting for it).
  Ref<pe::IpcqCall> ipcq_call(pe::IpcqCall::Kind kind, std::string_view dir, std::uint64_t nbytes, std::string call) {
    if (!ipcq_) throw tl::Error(call + ": this PE has no PE_IPCQ (pe_cpu parameter 'ipcq')");
    alive();
    if (dispatch_ > 0) sleep(dispatch_);
    Ref<pe::IpcqCall> c = kbsim::make_message<pe::IpcqCall>();
    c->kind = kind;
    c->id = ++next_id_;
    c->dir = std::string(dir);
    c->nbytes = nbytes;
    c->reply_to = index();
    if (const pe::IpcqQueue* q = ipcq_->queue(dir))
      call += (kind == pe::IpcqCall::Kind::kSend ? " to " : " from ") +
              kbsim::ahbm::names::pe(q->peer.sip, q->peer.cube, q->peer.pe);
    run_.in_flight.emplace(c->id, std::move(call));
    ++ipcq_calls_.count;
    send(to_ipcq_, c);
    return c;
  }
  static std::string ipcq_text(std::string_view fn, std::string_view dir, const Shape& shape, DType dtype) {
    return "tl." + std::string(fn) + "(" + std::string(dir) + ", " + shape.str() + ", " +
           std::string(kbsim::dtype_name(dtype)) + ")";
  }

  void send(std::string_view dir, const tl::Tensor& src) override {
    std::string call = ipcq_text("send", dir, src.shape(), src.dtype());
    kbsim::OpTensor o = ops_.operand(src, call);
    // A constant's bytes travel as a snapshot; a loaded tensor is read from memory as of its load (what the
    // timing pass loaded may predate a compute result the data pass stores there first).
    if (!src.pending() && src.desc().data && src.desc().loaded_at == kbsim::kNever) o.value = src.desc().data;
    if (!o.value && o.as_of == kbsim::kNever) o.as_of = now();  // captured at issue
    auto c = ipcq_call(pe::IpcqCall::Kind::kSend, dir, src.nbytes(), std::move(call));
    c->source = std::move(o);
    while (!c->done) await_completion();
  }
  void send(std::string_view dir, std::uint64_t src_addr, const Shape& shape, DType dtype, tl::Space space) override {
    if (space == tl::Space::kSram) need_address(ipcq_text("send", dir, shape, dtype), src_addr, shape, dtype, space);
    // HBM or cube SRAM: loaded into TCM first (a DMA read), then sent like any loaded tensor.
    if (space != tl::Space::kTcm) return send(dir, load(src_addr, shape, dtype));
    tl::Tensor raw(this, {shape, dtype, src_addr, tl::Space::kTcm, true, true, nullptr});
    send(dir, raw);
  }

  tl::Tensor recv(std::string_view dir, const Shape& shape, DType dtype) override {
    return wait(recv_async(dir, shape, dtype));
  }
  tl::Tensor recv(std::string_view dir, const Shape& shape, DType dtype, std::uint64_t dst_addr,
                  tl::Space dst_space) override {
    if (dst_space == tl::Space::kHbm) {  // a virtual address: tl.store's DMA write
      tl::Tensor t = recv(dir, shape, dtype);
      store(dst_addr, t);
      return t;
    }
    // This PE's TCM or a cube's SRAM, by physical address: one DMA write from the slot, through this PE's DMA (to
    // its TCM over the PE's own DMA-TCM link; to the SRAM over the NoC), which the data pass records as a copy.
    const std::string call =
        ipcq_text("recv", dir, shape, dtype) + " into " + std::string(tl::space_name(dst_space)) + " " + hex(dst_addr);
    need_address(call, dst_addr, shape, dtype, dst_space);
    tl::Tensor slot = recv(dir, shape, dtype);
    auto op =
        DataOps::make(kbsim::DataOp::Kind::kCopy, {dst_space, dst_addr, shape, dtype, kbsim::kNever, nullptr, false},
                      {ops_.operand(slot, call)});
    const auto& known = slot.desc().data;
    if (!slot.pending() && known) {
      memory_->write(dst_addr, *known);  // known bytes are visible at issue, as tl.store's
      op->in.front().value = known;
    }
    run(pe::CommandKind::kDmaWrite, {.type = StageType::kDmaWrite, .addr = dst_addr, .nbytes = slot.nbytes()}, call,
        std::move(op));
    if (dst_space == tl::Space::kSram) return slot;
    // The copy in TCM: an operand like a compute result there (pending until the data pass when the slot was).
    return tl::Tensor(this, {shape, dtype, dst_addr, tl::Space::kTcm, true, slot.pending(), known});
  }
  tl::RecvFuture recv_async(std::string_view dir, const Shape& shape, DType dtype) override {
    const std::uint64_t nbytes = static_cast<std::uint64_t>(shape.elements()) * kbsim::dtype_size(dtype);
    auto c = ipcq_call(pe::IpcqCall::Kind::kRecv, dir, nbytes, ipcq_text("recv", dir, shape, dtype));
    c->source.shape = shape;  // what the kernel expects, kept for wait()
    c->source.dtype = dtype;
    run_.futures.emplace(c->id, c);
    return {c->id};
  }
  tl::Tensor wait(tl::RecvFuture f) override {
    auto it = run_.futures.find(f.id);
    if (it == run_.futures.end())
      throw tl::Error("tl.wait: recv future " + std::to_string(f.id) + " was never issued or was already waited for");
    Ref<pe::IpcqCall> c = it->second;
    run_.futures.erase(it);
    while (!c->done) await_completion();
    const Shape& shape = c->source.shape;
    const DType dtype = c->source.dtype;
    if (c->message_bytes != c->nbytes)
      throw tl::Error(ipcq_text("recv", c->dir, shape, dtype) + " expects " + std::to_string(c->nbytes) +
                      " bytes; the message from " + c->dir + " has " + std::to_string(c->message_bytes));
    tl::Tensor::Desc d{shape, dtype, c->slot_addr, tl::Space::kTcm, true, !c->value, c->value};
    if (!c->value) {  // the data pass reads the slot as of its read, before it is reused, in its buffer kind's memory
      d.loaded_at = c->t_read;
      d.loaded_pa = c->slot_addr;
      d.loaded_space = c->slot_space;
    }
    return tl::Tensor(this, std::move(d));
  }
  void recv_no_consume(std::string_view dir, const Shape& shape, DType dtype) override {
    const std::uint64_t nbytes = static_cast<std::uint64_t>(shape.elements()) * kbsim::dtype_size(dtype);
    auto c =
        ipcq_call(pe::IpcqCall::Kind::kRecvNoConsume, dir, nbytes, ipcq_text("recv_no_consume", dir, shape, dtype));
    while (!c->done) await_completion();
  }

  // --- Waiting ---

  std::string waiting_for() const override {
    if (!launch_ || !run_.waiting) return {};
    std::string calls;
    for (const auto& [id, call] : run_.in_flight) calls += (calls.empty() ? "" : " and ") + call;
    return std::string(kbsim::ahbm::names::pe(self_.sip, self_.cube, self_.pe)) + " (kernel '" + launch_->kernel +
           "') waits in " + (calls.empty() ? "tl.wait" : calls) + " since t=" + ns(run_.since) + " ns";
  }

  void phase(std::string_view name) override { run_.phases.emplace_back(std::string(name), now()); }

  void cycles(std::uint64_t n) override {
    Tick t = kbsim::ns_to_ticks(static_cast<double>(n) / clock_ghz_);
    if (t > 0) sleep(t);
  }

  void wait(tl::Handle h) override {
    if (h.id == 0 || h.id > next_id_) throw tl::Error("tl.wait: handle " + std::to_string(h.id) + " was never issued");
    while (run_.composites.count(h.id)) await_completion();
  }
  void wait() override {
    while (!run_.composites.empty()) await_completion();
  }

  tl::Tensor full(const Shape& shape, double value, DType dtype) override {
    auto data =
        std::make_shared<std::vector<std::byte>>(static_cast<std::size_t>(shape.elements()) * kbsim::dtype_size(dtype));
    for (std::size_t i = 0; i < data->size(); i += kbsim::dtype_size(dtype))
      kbsim::encode_value(value, dtype, data->data() + i);
    return constant(shape, dtype, std::move(data));
  }
  tl::Tensor arange(std::int64_t start, std::int64_t end, DType dtype) override {
    if (end < start)
      throw tl::Error("tl.arange(" + std::to_string(start) + ", " + std::to_string(end) + "): end is before start");
    auto data =
        std::make_shared<std::vector<std::byte>>(static_cast<std::size_t>(end - start) * kbsim::dtype_size(dtype));
    for (std::int64_t i = 0; i < end - start; ++i)
      kbsim::encode_value(static_cast<double>(start + i), dtype,
                          data->data() + static_cast<std::size_t>(i) * kbsim::dtype_size(dtype));
    return constant({end - start}, dtype, std::move(data));
  }
  tl::Tensor constant(const Shape& shape, DType dtype, std::shared_ptr<std::vector<std::byte>> data) {
    const auto [addr, id] = scratch(data->size());
    tl::Tensor::Desc d{shape, dtype, addr, tl::Space::kTcm, true, false, std::move(data)};
    d.scratch_id = id;
    return tl::Tensor(this, std::move(d));
  }

  Tick dispatch_;
  double clock_ghz_;
  std::size_t stack_bytes_;
  std::uint64_t scratch_bytes_, scratch_base_ = 0;
  kbsim::ahbm::PeRef self_;
  kbsim::PortIndex scheduler_ = kbsim::kNoPort;
  const kbsim::ahbm::Translator* mmu_ = nullptr;
  DataOps ops_{nullptr};
  kbsim::ViewId memory_view_ = 0;
  kbsim::MemoryStore* memory_ = nullptr;
  const kbsim::KernelCatalogue* kernels_ = nullptr;
  kbsim::NodeIndex gemm_engine_ = ~kbsim::NodeIndex{0};
  kbsim::pe::IpcqPort* ipcq_ = nullptr;
  kbsim::PortIndex to_ipcq_ = kbsim::kNoPort;
  kbsim::Stat &launches_, &commands_, &kernel_ns_, &ipcq_calls_;
  std::uint64_t next_id_ = 0;
  kbsim::Fifo<Ref<HostCommand>> queue_;  ///< launches waiting for this one to end
  Ref<HostCommand> launch_;              ///< the launch scheduled or running
  Tick start_ = 0;
  Run run_;
  std::function<void()> outside_;                 ///< what the kernel asked to run on the event loop's stack
  std::exception_ptr outside_error_;              ///< what it threw, for the kernel
  bctx::fiber main_;                              ///< the event loop, while the kernel runs
  bctx::fiber fiber_;                             ///< the kernel, while it waits
  kbsim::fiber::StackBounds stack_, main_stack_;  ///< for AddressSanitizer's fiber annotations
  void* main_fake_ = nullptr;
  void* fiber_fake_ = nullptr;
  bool cancelled_ = false;  ///< going away: a kernel still waiting unwinds from its wait
};

}  // namespace

KBSIM_PLUGIN("pe_cpu") { kbsim::add_component<PeCpu>(plugin); }
