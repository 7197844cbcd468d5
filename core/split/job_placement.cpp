#include "split/job_placement.hpp"

#include <utility>
#include <vector>

#include "cluster/world.hpp"
#include "kbsim/json/json.hpp"
#include "split/cluster_transport.hpp"
#include "split/split_executor.hpp"

namespace kbsim::core {

namespace {

class JobPlacement final : public Placement {
 public:
  JobPlacement(std::string method, std::string refusal)
      : method_name_(std::move(method)), method_(partition_method(method_name_)), refusal_(std::move(refusal)) {}

  bool in_parts() const noexcept override { return true; }

  MakeExecutor executor(const std::shared_ptr<const Elaboration>& elaboration) override {
    if (!refusal_.empty()) throw ConfigError(refusal_);  // every rank builds alike, so every rank refuses alike
    const cluster::World& world = cluster::world();
    const Partition* p = nullptr;
    for (const Parted& known : parted_)
      if (known.elaboration == elaboration) p = known.partition.get();
    if (!p) {
      auto made = std::make_shared<const Partition>(partition(*elaboration, world.size, method_));
      p = made.get();
      parted_.push_back({elaboration, std::move(made)});
    }
    return split_executor(Split{p, world.rank, &transport_});
  }

  void together(const std::function<void()>& work) override {
    run_together(transport_, cluster::world().rank, cluster::world().size, work);
  }

  std::vector<std::string> summary(const std::vector<std::unique_ptr<Simulation>>& systems) const override {
    for (const auto& s : systems)
      if (const SplitExecutor* split = split_of(*s))
        return {"split      " + describe(split->partition()) + ", " + std::to_string(split->windows()) + " windows"};
    return {};
  }

  /// How the systems were split over the ranks (host figures: they differ with the rank count, the results do not).
  void write_host(json::JsonWriter& w, const std::vector<std::unique_ptr<Simulation>>& systems) const override {
    bool any = false;
    for (const auto& s : systems) any = any || split_of(*s) != nullptr;
    if (!any) return;
    w.key("split");
    w.begin_object();
    w.field("ranks", cluster::world().size);
    w.field("partition", method_name_);
    w.key("systems");
    w.begin_array();
    for (const auto& s : systems)
      if (const SplitExecutor* split = split_of(*s)) write_system(w, *split);
    w.end_array();
    w.end_object();
  }

 private:
  static void write_system(json::JsonWriter& w, const SplitExecutor& split) {
    const Partition& p = split.partition();
    w.begin_object();
    w.field("summary", describe(p));
    w.key("nodes_per_rank");
    w.begin_array();
    for (std::size_t n : p.nodes_per_rank) w.value(static_cast<std::uint64_t>(n));
    w.end_array();
    w.field("cut_links", p.cut_links);
    if (p.lookahead != kNever) w.field("lookahead_ns", ticks_to_ns(p.lookahead));
    w.field("windows", split.windows());
    w.end_object();
  }

  struct Parted {
    std::shared_ptr<const Elaboration> elaboration;
    std::shared_ptr<const Partition> partition;  ///< its systems point to it
  };
  std::string method_name_;
  PartitionMethod method_;
  std::string refusal_;
  ClusterTransport transport_;
  std::vector<Parted> parted_;
};

}  // namespace

std::unique_ptr<Placement> bench_placement(const std::string& method, bool nested, const std::string& bench,
                                           bool splits) {
  const unsigned ranks = cluster::world().size;
  if (nested || ranks == 1 || method == "none") return std::make_unique<Placement>();
  if (splits) return std::make_unique<JobPlacement>(method, "");
  return std::make_unique<JobPlacement>(
      method, "bench '" + bench + "' cannot run split over " + std::to_string(ranks) +
                  " ranks: it drives components through their own interfaces, which only the rank running a "
                  "component sees (docs/scale-out.md); --partition none runs the whole system on every rank");
}

std::string preview_parts(const Elaboration& elaboration, unsigned ranks) {
  return "split: " + describe(partition(elaboration, ranks));
}

std::unique_ptr<Placement> command_placement(const std::string& command, bool splits) {
  const unsigned ranks = cluster::world().size;
  if (ranks == 1) return std::make_unique<Placement>();
  if (!splits)
    throw UsageError("kbsim " + command + " runs in one process, not over " + std::to_string(ranks) +
                     " MPI ranks: start it without mpirun (docs/scale-out.md)");
  return std::make_unique<JobPlacement>("structure", "");
}

}  // namespace kbsim::core
