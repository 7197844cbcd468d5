// The distributed runtime (docs/model.md, "The distributed runtime"), after
// torch.distributed: rank = SIP. One process drives every rank; spawn() runs
// one worker per rank on a cooperative fiber, and a worker that waits for the
// device (a launch, a collective, a barrier) yields to the others, so every
// rank's all_reduce is on the device before the simulation runs them.
//
//   auto& dist = ctx.configured().service<kbsim::rt::Distributed>();
//   dist.init_process_group(ccl::config(ctx));  // installs the algorithm's IPCQ wiring
//   dist.spawn([&](unsigned rank) {
//     rt.set_device(rank);                        // this worker's tensors and launches go to SIP `rank`
//     auto t = rt.from_host(...);
//     dist.all_reduce(t);                         // sum over the ranks, in place
//   }, dist.get_world_size());
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kbsim/pe/ccl.hpp"
#include "kbsim/rt/runtime.hpp"

namespace kbsim::rt {

/// One all_reduce, as every rank ran it.
struct CollectiveResult {
  std::string algorithm, kernel;
  std::uint64_t n_elem = 0;
  std::vector<LaunchResult> ranks;  ///< by rank
};

class Distributed : public Service {
 public:
  static constexpr std::string_view kServiceName = "distributed";

  /// Initialise the default process group with the run's CCL configuration:
  /// the world size (the algorithm's world_size, else the defaults', else the
  /// SIP count) and the algorithm's IPCQ wiring installed in every PE_IPCQ.
  /// Backends other than "ahbm" are refused.
  virtual void init_process_group(const ccl::Config& ccl, std::string_view backend = "ahbm") = 0;
  virtual bool is_initialized() const noexcept = 0;
  virtual std::string_view get_backend() const = 0;
  /// The calling worker's rank (0 outside spawn).
  virtual unsigned get_rank() const = 0;
  virtual unsigned get_world_size() const = 0;

  /// Sum `t` over the ranks, in place: each rank passes its own tensor (one
  /// shard per cube's pe0 of its SIP). Only op "sum" is supported.
  virtual void all_reduce(const Tensor& t, std::string_view op = "sum") = 0;
  /// Wait until every live worker has reached the barrier (no simulated time).
  virtual void barrier() = 0;
  /// Run fn(rank) for ranks 0..nprocs-1, each on its own worker fiber, until all return.
  /// A worker's failure ends the others and is reported with its rank.
  virtual void spawn(const std::function<void(unsigned rank)>& fn, unsigned nprocs) = 0;

  /// Install explicit IPCQ wiring (kernel-level benches and tests that wire
  /// their own queues), with the configuration's buffer kind and slots.
  virtual void install_ipcq(const std::vector<ccl::Wire>& wires, const ccl::Config& ccl) = 0;
  /// Every all_reduce completed so far, in completion order.
  virtual const std::vector<CollectiveResult>& collectives() const noexcept = 0;
};

}  // namespace kbsim::rt
