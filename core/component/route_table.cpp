#include "component/route_table.hpp"

#include <algorithm>

#include "component/elaboration.hpp"

namespace kbsim::core {

namespace {

/// Whether searches in `a` and `b` read the same inputs (the transit costs are the systems', bound in the table).
bool routes_alike(const Elaboration& a, const Elaboration& b) {
  if (&a == &b) return true;
  if (a.metric != b.metric || a.view_names.size() != b.view_names.size() || a.port_begin != b.port_begin ||
      a.steps != b.steps || a.id_order != b.id_order)
    return false;
  for (std::size_t p = 0; p < a.links.size(); ++p)  // a route lists each port's node
    if (a.links[p].src != b.links[p].src) return false;
  return true;
}

}  // namespace

std::shared_ptr<RouteTable> RouteTable::for_elaboration(const std::shared_ptr<const Elaboration>& el) {
  struct Kept {
    std::shared_ptr<const Elaboration> el;  ///< the first with these inputs (the comparison reads it in place)
    std::shared_ptr<RouteTable> table;
  };
  thread_local std::vector<Kept> kept;  // newest first
  constexpr std::size_t kKept = 4;
  for (std::size_t i = 0; i < kept.size(); ++i)
    if (routes_alike(*kept[i].el, *el)) {
      std::rotate(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(i),
                  kept.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      return kept.front().table;
    }
  kept.insert(kept.begin(), Kept{el, std::make_shared<RouteTable>()});
  if (kept.size() > kKept) kept.pop_back();
  return kept.front().table;
}

}  // namespace kbsim::core
