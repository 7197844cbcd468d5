// A system split over the ranks of a job (docs/scale-out.md): which part is
// this rank's, and how ranks talk. The split executor's window loop
// (split_executor.hpp) uses it; the cluster module provides it over MPI, tests
// with threads.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kbsim/component.hpp"
#include "kbsim/errors.hpp"
#include "kbsim/time.hpp"
#include "sim/engine.hpp"
#include "split/partition.hpp"

namespace kbsim::core {

/// Collectives among the ranks of one split system: every rank calls each in the same order.
class Transport {
 public:
  virtual ~Transport() = default;
  struct Exchanged {
    std::vector<std::string> from_rank;  ///< what each rank sent this one, by rank
    Tick next = kNever;                  ///< the smallest `next` any rank gave
  };
  /// Send to_rank[r] to rank r (this rank's own entry included), and agree on the smallest `next`; into `in`, whose
  /// strings are reused (a split run's windows allocate nothing once their buffers have grown). The only collective
  /// a split run uses: whatever one rank is doing when another leaves or goes another way, the calls match, and
  /// what they carry says what the other is doing (split_executor.cpp, said.hpp).
  virtual void exchange(const std::vector<std::string>& to_rank, Tick next, Exchanged& in) = 0;
  Exchanged exchange(const std::vector<std::string>& to_rank, Tick next) {
    Exchanged in;
    exchange(to_rank, next, in);
    return in;
  }
};

/// An error one rank of a split system met, as every rank ends with it: "rank R of N: " and the error's own words,
/// with its exit code.
class RankError final : public Error {
 public:
  RankError(ExitCode code, const std::string& what) : Error(what), code_(code) {}
  ExitCode code() const noexcept override { return code_; }

 private:
  ExitCode code_;
};

struct Split {
  const Partition* partition = nullptr;
  unsigned rank = 0;
  Transport* transport = nullptr;
};

/// The core as the components of other ranks see it, in each rank's copy of a split system: they are built and set
/// up (their transit costs, routes and interfaces are the system's), but only the rank that runs one acts on what it
/// does; so what its setup or the bench makes it send or schedule is dropped here (the same happens on its rank).
/// A handler of this rank making it do so is an error: that would be one component calling into another rank's.
/// Everything else is the simulation's.
class Shadow final : public Simulator {
 public:
  Shadow(Simulator& sim, const Engine& engine, bool& idle) : sim_(sim), engine_(engine), idle_(idle) {}
  Tick now() const noexcept override { return sim_.now(); }
  void send(NodeIndex from, PortIndex, Ref<Message>, Tick) override { drop(from); }
  void forward(NodeIndex from, PortIndex, const Flit&, Tick) override { drop(from); }
  EventId schedule(NodeIndex self, Tick, std::uint64_t, Ref<Message>, std::uint8_t) override {
    drop(self);
    return {};
  }
  void cancel(EventId) noexcept override {}
  const Route& route(NodeIndex from, NodeIndex to, ViewId view) override { return sim_.route(from, to, view); }
  ViewId find_view(std::string_view name) const override { return sim_.find_view(name); }
  std::span<const RawParam> attrs() const noexcept override { return sim_.attrs(); }
  NodeIndex find_node(std::string_view id) const override { return sim_.find_node(id); }
  NodeIndex lookup_node(std::string_view id) const noexcept override { return sim_.lookup_node(id); }
  std::string_view node_id(NodeIndex n) const noexcept override { return sim_.node_id(n); }
  ComponentContext context(NodeIndex n) const noexcept override {
    ComponentContext c = sim_.context(n);
    c.sim = const_cast<Shadow*>(this);
    return c;
  }
  Stat& stat(NodeIndex self, std::string_view name) override { return sim_.stat(self, name); }
  void set_transit_cost(NodeIndex self, Tick cost) override { sim_.set_transit_cost(self, cost); }
  void log(NodeIndex self, LogLevel level, std::string_view text) override { sim_.log(self, level, text); }
  void request_stop() noexcept override {}
  Tick control_latency(const Route& route) const override { return sim_.control_latency(route); }
  Component& component(NodeIndex n) override { return sim_.component(n); }
  Service* find_service(std::string_view name) override { return sim_.find_service(name); }
  void op_resume(NodeIndex, const Message&) override {}
  // (a split run takes no trains: its flits cross between ranks one by one)
  bool forward_train(NodeIndex from, PortIndex, const Train&, const FlitTimes&) override {
    drop(from);
    return false;
  }
  void cut_train(NodeIndex self, TrainId) override { drop(self); }
  void done_train(NodeIndex self, TrainId) override { drop(self); }
  TrainId send_train(NodeIndex from, PortIndex, Ref<Message>, std::span<const Tick>, std::uint32_t,
                     std::uint64_t) override {
    drop(from);
    return {};
  }

 private:
  void drop(NodeIndex n) {
    if (engine_.dispatching())
      throw SimError(std::string(sim_.node_id(n)) +
                     " runs on another rank of this split run, and a component of this rank made it act (through "
                     "its own interface): a split run cannot do that (docs/scale-out.md)");
    idle_ = false;
  }
  Simulator& sim_;
  const Engine& engine_;
  bool& idle_;
};

/// The end of a job whose systems were split over `ranks` ranks, on every rank, however it ends: tell every rank
/// this one is done (`code` kOk, or the error it ends with: `what`) and wait until every rank is. A rank still
/// running a system learns of it at its next exchange and ends with this rank's error (or, if this one ended without
/// one, with an error saying the ranks' benches went different ways), then leaves too; so no rank waits forever.
/// Returns the error of the lowest other rank that failed, when this one did not.
/// (`named`: `what` already names the rank it happened on, as a RankError passed on does.)
std::optional<RankError> leave_split(Transport& transport, unsigned rank, unsigned ranks, ExitCode code,
                                     const std::string& what, bool named);
/// Run `work` (a bench or a command whose systems may be split) and leave with the other ranks: an exception it
/// throws is told to every rank (leave_split) and thrown on; when it returns, an error another rank ended with is
/// thrown here.
void run_together(Transport& transport, unsigned rank, unsigned ranks, const std::function<void()>& work);

}  // namespace kbsim::core
