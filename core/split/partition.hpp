// How a system is split over the ranks of a job (docs/scale-out.md): each rank
// owns whole components; nodes joined by a link without latency stay together
// (a cut link must leave time to exchange what crosses it), and so do the nodes
// of one group at the level that gives every rank a part ("sip0/cube3": by SIP
// while there are at least as many SIPs as ranks, else by cube). Parts are
// dealt out in node order, in contiguous runs of about equal node counts. A
// cut link's lookahead is its latency plus its sender's promised delay; the
// split's is the smallest of its cut links', and among the group levels that
// fill the ranks the one with the largest wins.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "component/elaboration.hpp"

namespace kbsim::core {

struct Partition {
  unsigned ranks = 1;
  std::vector<unsigned> rank_of;  ///< per node
  std::vector<std::size_t> nodes_per_rank;
  std::size_t cut_links = 0;
  Tick lookahead = kNever;   ///< the smallest link_lookahead of a cut link (kNever: none is cut)
  unsigned group_level = 0;  ///< the group depth kept together (0: groups were not used)
};

/// What link `l` leaves a window when it is cut: its latency plus its sender's promise (the least time between the
/// sender acting and anything it sends leaving it: ComponentInfo::send_delay_param, checked as messages cross).
Tick link_lookahead(const Elaboration& el, const Link& l) noexcept;

/// How parts are formed: kStructure keeps groups whole (above; a graph without groups is split as kNodes does);
/// kNodes ignores groups and keeps together only what links without latency join.
enum class PartitionMethod { kStructure, kNodes };

/// "structure" or "nodes"; UsageError naming the choices otherwise.
PartitionMethod partition_method(const std::string& name);

/// Split `el` over `ranks` ranks. ConfigError when it has fewer separable parts than ranks.
Partition partition(const Elaboration& el, unsigned ranks, PartitionMethod method = PartitionMethod::kStructure);

/// "2 ranks (by group level 1): 120 + 118 nodes, 16 cut links, lookahead 0.1 ns" and the like.
std::string describe(const Partition& p);

}  // namespace kbsim::core
