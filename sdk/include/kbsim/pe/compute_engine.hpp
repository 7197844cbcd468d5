// Base of the PE compute engines (GEMM, MATH and custom ones; docs/model.md,
// "The PE"): every stage holds the PE's shared compute slot (a semaphore of
// capacity 1 named "<pe prefix>.<shared_resource>") for latency(stage); waiters
// are served in FIFO order. A derived engine only gives the latency model.
#pragma once

#include <string>
#include <vector>

#include "kbsim/pe/command.hpp"
#include "kbsim/pe/slots.hpp"

namespace kbsim::pe {

class ComputeEngine : public StageEngine {
 public:
  /// An engine for stages of type `serves` (kGemm or kMath).
  ComputeEngine(const ComponentContext& ctx, StageType serves)
      : StageEngine(ctx),
        serves_(serves),
        ops_(stat(kStatOps)),
        work_(stat(serves == StageType::kGemm ? kStatMacs : kStatElements)),
        busy_(stat(kStatBusyNs)) {}

  // Statistics, declared once: base_info() lists them, stat() binds them.
  static constexpr StatDef kStatOps{"ops", StatKind::kCounter, "stages", "stages run"};
  static constexpr StatDef kStatMacs{"macs", StatKind::kCounter, "MACs", "multiply-accumulates (m x k x n per stage)"};
  static constexpr StatDef kStatElements{"elements", StatKind::kCounter, "elements",
                                         "output elements (m x n per stage)"};
  static constexpr StatDef kStatBusyNs{"busy_ns", StatKind::kValue, "ns", "time the engine held the compute slot"};

  static constexpr StringParam kSharedResource{
      "shared_resource", "accel_slot",
      "compute slot shared with the PE's other compute engines (semaphore <pe>.<name>)"};

  /// The parameters, ports and statistics every compute engine has; add the latency model's parameters.
  static ComponentInfo base_info(std::string type, std::string summary, StageType serves) {
    ComponentInfo i;
    i.type = std::move(type);
    i.summary = std::move(summary);
    i.params = {kSharedResource};
    i.ports = {{"pe_internal", "PE-internal links (tile tokens in and out)"}};
    i.stats = {kStatOps, serves == StageType::kGemm ? kStatMacs : kStatElements, kStatBusyNs};
    return i;
  }

  void setup() override {
    slots_ = &service<Slots>();
    slot_ = slots_->slot(sibling(id(), params().get(kSharedResource)), 1);
  }

  void on_timer(std::uint64_t tag, Ref<Message> msg) override {
    Ref<TileToken> t(static_cast<TileToken*>(msg.get()));
    if (tag == kGranted) {
      const Stage& s = t->current();
      start_ = now();
      ++ops_.count;
      work_.count += std::uint64_t{s.m} * (serves_ == StageType::kGemm ? std::uint64_t{s.k} * s.n : s.n);
      schedule(latency(s), kDone, std::move(t));
      return;
    }
    busy_.value += ticks_to_ns(now() - start_);
    slots_->release(slot_);
    finish_stage(std::move(t), start_);
  }

 protected:
  /// Time the stage holds the compute slot.
  virtual Tick latency(const Stage& s) const = 0;

  /// `cycles` clock cycles at `clock_ghz`, in ticks.
  static Tick cycles_to_ticks(double cycles, double clock_ghz) { return ns_to_ticks(cycles / clock_ghz); }

 private:
  static constexpr std::uint64_t kGranted = 0, kDone = 1;

  void accept(Ref<TileToken> t, bool) override {
    if (t->current().type != serves_)
      fail("received a " + std::string(stage_name(t->current().type)) + " stage; it runs " +
           std::string(stage_name(serves_)) + " stages");
    slots_->acquire(slot_, index(), kGranted, std::move(t));
  }

  StageType serves_;
  Slots* slots_ = nullptr;
  std::uint32_t slot_ = 0;
  Tick start_ = 0;  ///< when the running stage got the slot (one at a time: the slot has capacity 1)
  Stat &ops_, &work_, &busy_;
};

}  // namespace kbsim::pe
