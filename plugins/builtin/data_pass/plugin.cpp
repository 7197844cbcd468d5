// The data pass as a run observer: with --verify-data it keeps the op log of
// the configured system, offers itself there as the DataPass service (the host
// runtime logs host writes through it and reads computed values back), runs
// what is left at the end of the run, and adds its "data_pass" section to
// results.json.
#include "kbsim/plugin.hpp"

#include <cstdio>
#include <memory>

#include "executor.hpp"
#include "kbsim/observer.hpp"
#include "kbsim/tl/verify.hpp"

namespace kbsim::data_pass {

class DataPassObserver final : public RunObserver {
 public:
  static ObserverInfo info() {
    return {"data_pass",
            "--verify-data: replays the op log in start order and computes every operation's values (Eigen), so "
            "host reads return computed data",
            {{verify::kVerifyData}},
            true};  // a sweep's points verify their own runs
  }
  static DataPassObserver* create(const RunRequest& request) {
    return request.flags.get(verify::kVerifyData) ? new DataPassObserver() : nullptr;
  }

  bool keeps_records() const noexcept override { return true; }
  void attach(System& system, OpLogView& log) override {
    exec_ = std::make_unique<DataExecutor>(log, system);
    system.provide(DataPass::kServiceName, *exec_);
  }
  void finish(BenchContext& ctx) override {
    if (!exec_) return;
    exec_->flush_all();
    const DataExecutor::Stats& d = exec_->stats();
    char line[200];
    std::snprintf(line, sizeof line, "data pass  %llu ops computed (%llu GEMM, %llu math, %llu copies) in %.3f s wall",
                  static_cast<unsigned long long>(d.executed), static_cast<unsigned long long>(d.gemms),
                  static_cast<unsigned long long>(d.maths), static_cast<unsigned long long>(d.copies), d.wall_s);
    ctx.note(line);
  }
  void write_results(Metrics& results) const override {
    if (!exec_) return;
    const DataExecutor::Stats& d = exec_->stats();
    Metrics& m = results.object("data_pass");
    m.set("executed", d.executed);
    m.set("skipped", d.skipped);
    m.set("gemms", d.gemms);
    m.set("maths", d.maths);
    m.set("copies", d.copies);
    m.set("gemm_batches", d.batches);
    m.set("batched_gemms", d.batched);
    m.set("shared_b_gemms", d.shared_b);
    m.set("versions", std::uint64_t{exec_->store().versions()});
    m.set("bytes_held", std::uint64_t{exec_->store().bytes_held()});
    m.set("wall_time_s", d.wall_s);
  }

 private:
  std::unique_ptr<DataExecutor> exec_;
};

}  // namespace kbsim::data_pass

KBSIM_PLUGIN("data_pass") {
  kbsim::add_observer<kbsim::data_pass::DataPassObserver>(plugin);
  kbsim::add_payload<kbsim::DataOp>(plugin, "what a data operation computes, as its records carry it between ranks");
}
