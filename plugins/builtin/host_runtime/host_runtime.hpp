// The host runtime (kbsim/rt/runtime.hpp) on one simulated system. It owns the
// host-side metadata (placements, allocators, launch records) and talks to the
// device only through its entry components: a SIP's pcie_ep for memory traffic
// and its io_cpu for MMU mappings and launches. Blocking calls run the system
// until their work completes. A service of the configured system.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "allocator.hpp"
#include "kbsim/ahbm/host_command.hpp"
#include "kbsim/ahbm/memory_map.hpp"
#include "kbsim/pe/data_op.hpp"
#include "kbsim/pe/kernels.hpp"
#include "kbsim/pe/memory_store.hpp"
#include "kbsim/rt/runtime.hpp"
#include "workers.hpp"

namespace kbsim::host_runtime {

class HostRuntime final : public rt::Runtime,
                          public ReplicatedService,
                          private kbsim::ahbm::HostCommand::Client,
                          private kbsim::ahbm::MemClient {
 public:
  /// A runtime on `system`: the PE MMU page size is sip0.cube0.pe0.pe_mmu's;
  /// with a data pass on the system (--verify-data), host writes are logged
  /// for it and host reads return the values it computed.
  /// `sim` (when given) hears its debug warnings (--log-level debug).
  explicit HostRuntime(System& system, Simulator* sim = nullptr);
  ~HostRuntime() override;
  /// None on a system that is not an AHBM one (its graph publishes no memory map).
  static HostRuntime* create(System& system, Simulator& sim) {
    return find_attr(system.attrs(), ahbm::attrs::kSips.name) ? new HostRuntime(system, &sim) : nullptr;
  }
  /// A warning for a likely mistake that is not an error (the reference's debug warnings), at --log-level debug,
  /// as SIP 0's PCIe endpoint's (where the host's work enters).
  void debug(const std::string& text) const;
  /// Wait for outstanding launches; NO_REQUESTS if nothing was ever submitted.
  void finish() override;

  /// The spawn workers (rt::Distributed runs them; waits in a worker yield to the others).
  Workers& workers() noexcept { return workers_; }
  /// Run the system until `done()`; SimError with `stuck()` and who waits on what if it goes idle first.
  void run_until(const std::function<bool()>& done, const std::function<std::string()>& stuck);

  /// Let launch() submit kernel names the catalogue does not know (to test the PE-side check).
  void allow_unknown_kernels() noexcept { check_kernels_ = false; }
  std::uint64_t page_size() const noexcept { return alloc_.page_size(); }

  // rt::Runtime
  rt::Tensor empty(const Shape& shape, DType dtype, const rt::DPPolicy& dp = {}, std::string name = {}) override;
  rt::Tensor zeros(const Shape& shape, DType dtype, const rt::DPPolicy& dp = {}, std::string name = {}) override;
  rt::Tensor from_host(const Shape& shape, DType dtype, std::span<const double> values, const rt::DPPolicy& dp = {},
                       std::string name = {}) override;
  void free(rt::Tensor& t) override;
  rt::TransferResult write(const rt::Tensor& t, std::span<const std::byte> bytes) override;
  std::vector<std::byte> read(const rt::Tensor& t, rt::TransferResult* timing = nullptr) override;
  rt::TransferResult copy(const rt::Tensor& dst, const rt::Tensor& src) override;
  std::string summary(const rt::Tensor& t) override;
  std::vector<double> read_slice(const rt::Tensor& t, const rt::Region& region) override;
  rt::TransferResult write_slice(const rt::Tensor& t, const rt::Region& region,
                                 std::span<const double> values) override;
  rt::LaunchHandle launch(std::string_view kernel, std::vector<rt::Arg> args,
                          const rt::LaunchOptions& opt = {}) override;
  const rt::LaunchResult& wait(rt::LaunchHandle h) override;
  void wait_all() override;
  std::uint64_t submitted() const noexcept override { return submitted_; }
  void set_device(unsigned sip) override;
  unsigned current_device() const override { return workers_.device(); }
  System& system() override { return system_; }
  Tick now() const override { return system_.now(); }
  unsigned cubes_per_sip() const override { return map_.cubes_per_sip; }
  void on_devices(BenchContext& ctx, const std::function<void(BenchContext&)>& body) override;
  unsigned pes_per_cube() const override { return map_.pes_per_cube; }
  void open_scope(std::vector<rt::Tensor>& made) override;
  void close_scope(std::vector<rt::Tensor>& made) override;

  // ReplicatedService: in a split run, the completions of the run just ended, which only the rank running the
  // initiators (io_cpu, pcie_ep) received.
  void save_news(ByteWriter& w) override;
  void load_news(ByteReader& r) override;

 private:
  /// A host command in flight (MMU map/unmap or launch).
  struct Command {
    Ref<kbsim::ahbm::HostCommand> cmd;
    Tick t_submit = 0, t_done = 0;
    bool done = false;
  };
  /// The one memory transfer in flight.
  struct Transfer {
    std::vector<Ref<kbsim::ahbm::MemRequest>> requests;
    std::size_t pending = 0;
  };

  void on_complete(kbsim::ahbm::HostCommand& cmd) override;
  void on_complete(kbsim::ahbm::MemRequest& req) override;

  /// The live tensor behind a handle; BAD_USE for an empty, freed or foreign one.
  rt::Tensor::Info& live(const rt::Tensor& t, const std::string& what);
  /// Submit `cmd` to the io_cpu of `sip` and record it under a new correlation id.
  Command& submit(unsigned sip, Ref<kbsim::ahbm::HostCommand> cmd);
  /// Map (or unmap) every shard of `info` in the MMU of every PE holding one; blocking.
  void update_mmu(const rt::Tensor::Info& info, kbsim::ahbm::HostCommand::Kind kind);
  /// Read or write `shards` of `info` through the SIP's pcie_ep, one request each; blocking.
  rt::TransferResult transfer(const rt::Tensor::Info& info, kbsim::ahbm::MemOp op,
                              const std::vector<const rt::ShardSpec*>& shards);
  /// Bytes at a physical address: one memory request.
  struct Extent {
    std::uint64_t pa = 0, nbytes = 0;
  };
  /// The same for any extents of `info`'s memory (slices: one per row of a region in each replica).
  rt::TransferResult transfer(const rt::Tensor::Info& info, kbsim::ahbm::MemOp op, const std::vector<Extent>& extents);
  /// Wait for the launches still running on `sip` (they may write what the host is about to read).
  void wait_for_launches_on(unsigned sip);
  /// The shard a slice's region lies in (slices.cpp); BAD_USE / NOT_SUPPORTED naming `what` otherwise.
  const rt::ShardSpec& slice_shard(const rt::Tensor::Info& info, const rt::Region& region, const char* what) const;
  /// The region's rows in shard `s`'s memory, one extent each.
  std::vector<Extent> slice_rows(const rt::Tensor::Info& info, const rt::ShardSpec& s, const rt::Region& region) const;
  /// The caller's open TensorScopes, innermost last (the driver's, or the calling spawn worker's).
  std::vector<std::vector<rt::Tensor>*>& scopes() { return scopes_[workers_.in_worker() ? workers_.rank() + 1 : 0]; }

  System& system_;
  Simulator* sim_;  ///< for debug(); nullptr: none
  kbsim::ahbm::MemoryMap map_;
  DeviceAllocators alloc_;
  MemoryStore& memory_;
  const KernelCatalogue* kernels_;  ///< nullptr: no kernel is registered anywhere
  bool check_kernels_ = true;
  std::uint64_t next_correlation_ = 1;
  std::uint64_t submitted_ = 0;
  std::uint64_t tensors_created_ = 0;
  std::map<const rt::Tensor::Info*, std::shared_ptr<rt::Tensor::Info>> tensors_;  ///< live tensors
  std::map<std::uint64_t, Command> commands_;                                     ///< by correlation id
  std::map<std::uint64_t, rt::LaunchResult> launches_;  ///< by correlation id; results once complete
  Transfer transfer_;
  /// In a split run: what completed here since the last save_news (correlation ids; a memory request's with its
  /// request id).
  std::vector<std::uint64_t> done_commands_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> done_requests_;
  DataPass* data_;  ///< nullptr: no data pass on this system
  /// Open TensorScopes by caller: 0 the driver, rank + 1 a spawn worker.
  std::map<unsigned, std::vector<std::vector<rt::Tensor>*>> scopes_;
  Workers workers_;
};

}  // namespace kbsim::host_runtime
