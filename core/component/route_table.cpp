#include "component/route_table.hpp"

#include <algorithm>

#include "component/elaboration.hpp"

namespace kbsim::core {

namespace {

/// Everything a route search reads of an elaboration (the transit costs are the systems', bound in the table).
struct RoutingInputs {
  RouteMetric metric = RouteMetric::kLatency;
  std::size_t views = 0;
  std::vector<std::uint32_t> port_begin;
  std::vector<Elaboration::Step> steps;
  std::vector<NodeIndex> id_rank;
  std::vector<std::uint32_t> sources;  ///< per out-port: its node (a route lists them)

  explicit RoutingInputs(const Elaboration& el)
      : metric(el.metric), views(el.view_names.size()), port_begin(el.port_begin), steps(el.steps),
        id_rank(el.id_rank) {
    sources.reserve(el.port_links.size());
    for (std::uint32_t li : el.port_links) sources.push_back(el.links[li].src);
  }
  bool operator==(const RoutingInputs&) const = default;
};

}  // namespace

std::shared_ptr<RouteTable> RouteTable::for_elaboration(const Elaboration& el) {
  struct Kept {
    RoutingInputs inputs;
    std::shared_ptr<RouteTable> table;
  };
  thread_local std::vector<Kept> kept;  // newest first
  constexpr std::size_t kKept = 4;
  RoutingInputs inputs(el);
  for (std::size_t i = 0; i < kept.size(); ++i)
    if (kept[i].inputs == inputs) {
      std::rotate(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(i), kept.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      return kept.front().table;
    }
  kept.insert(kept.begin(), Kept{std::move(inputs), std::make_shared<RouteTable>()});
  if (kept.size() > kKept) kept.pop_back();
  return kept.front().table;
}

}  // namespace kbsim::core
