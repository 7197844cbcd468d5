// rt::Distributed on the host runtime (kbsim/rt/distributed.hpp): the process
// group, the IPCQ install and all_reduce through a CCL algorithm plugin.
#pragma once

#include <memory>

#include "host_runtime.hpp"
#include "kbsim/pe/ipcq.hpp"
#include "kbsim/rt/distributed.hpp"

namespace kbsim::host_runtime {

class Distributed final : public rt::Distributed {
 public:
  explicit Distributed(System& system);
  static Distributed* create(System& system, Simulator&) {
    return find_attr(system.attrs(), ahbm::attrs::kSips.name) ? new Distributed(system) : nullptr;
  }

  void init_process_group(const ccl::Config& ccl, std::string_view backend) override;
  bool is_initialized() const noexcept override { return algorithm_ != nullptr; }
  std::string_view get_backend() const override;
  unsigned get_rank() const override;
  unsigned get_world_size() const override;
  void all_reduce(const rt::Tensor& t, std::string_view op) override;
  void barrier() override;
  void spawn(const std::function<void(unsigned)>& fn, unsigned nprocs) override;
  void install_ipcq(const std::vector<ccl::Wire>& wires, const ccl::Config& ccl) override;
  const std::vector<rt::CollectiveResult>& collectives() const noexcept override { return done_; }

 private:
  void require_initialized(const char* call) const;
  void install(const std::vector<ccl::Wire>& wires, const pe::IpcqConfig& cfg);
  /// Run `ask` (a call of the algorithm `name`'s code, for `rank`): what it throws that is not a kbsim error (which
  /// names itself) is a fault of the algorithm's plugin, reported as that algorithm's, with the rank and the time.
  template <class Ask>
  auto ask(const std::string& name, const char* method, unsigned rank, Ask&& ask) const -> decltype(ask());

  System& system_;
  HostRuntime& rt_;
  ccl::SystemShape shape_;
  std::string algorithm_name_;
  std::unique_ptr<ccl::Algorithm> owned_;
  const ccl::Algorithm* algorithm_ = nullptr;
  Params params_;  ///< the algorithm's, as init_process_group was given them
  unsigned world_ = 0;
  std::vector<unsigned> calls_;                ///< all_reduce calls per rank
  std::vector<rt::CollectiveResult> pending_;  ///< by call index: ranks filled in as they finish
  std::vector<rt::CollectiveResult> done_;
};

}  // namespace kbsim::host_runtime
