#include "split/partition.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "kbsim/errors.hpp"
#include "kbsim/text.hpp"

namespace kbsim::core {

Tick link_lookahead(const Elaboration& el, const Link& l) noexcept { return l.latency + el.nodes[l.src].send_delay; }

namespace {

struct Sets {
  std::vector<NodeIndex> up;
  explicit Sets(std::size_t n) : up(n) { std::iota(up.begin(), up.end(), NodeIndex{0}); }
  NodeIndex find(NodeIndex x) {
    while (up[x] != x) x = up[x] = up[up[x]];
    return x;
  }
  void join(NodeIndex a, NodeIndex b) {
    a = find(a);
    b = find(b);
    if (a != b) up[std::max(a, b)] = std::min(a, b);  // a set's name is its lowest node
  }
};

/// The first `level` (>= 1) parts of a group path ("sip0/cube3", 1: "sip0"); the whole path when it has fewer.
std::string_view prefix(std::string_view group, unsigned level) {
  std::size_t end = 0;
  for (unsigned k = 0; k < level; ++k) {
    const std::size_t slash = group.find('/', end);
    if (slash == std::string_view::npos) return group;
    end = slash + 1;
  }
  return group.substr(0, end - 1);
}

/// Parts (sets of nodes that stay together) when groups are kept whole at `level` (0: groups ignored).
Sets parts(const Elaboration& el, unsigned level) {
  Sets s(el.nodes.size());
  for (const Link& l : el.links)
    if (link_lookahead(el, l) == 0) s.join(l.src, l.dst);
  if (level > 0) {
    std::unordered_map<std::string_view, NodeIndex> first;
    for (NodeIndex n = 0; n < el.nodes.size(); ++n) {
      const std::string_view p = prefix(el.nodes[n].group, level);
      if (p.empty()) continue;
      auto [it, fresh] = first.try_emplace(p, n);
      if (!fresh) s.join(it->second, n);
    }
  }
  return s;
}

std::size_t count_parts(Sets& s) {
  std::size_t n = 0;
  for (NodeIndex x = 0; x < s.up.size(); ++x) n += s.find(x) == x;
  return n;
}

/// `s`'s parts dealt out to `ranks` ranks (at least as many parts), with the links cut and their least lookahead.
Partition deal(const Elaboration& el, Sets& s, unsigned ranks) {
  const std::size_t n = el.nodes.size();
  Partition p;
  p.ranks = ranks;
  p.rank_of.assign(n, 0);
  p.nodes_per_rank.assign(ranks, 0);
  // Parts in order of their lowest node, dealt out in contiguous runs of about n / ranks nodes; every rank gets one.
  std::vector<std::size_t> size(n, 0);
  for (NodeIndex x = 0; x < n; ++x) ++size[s.find(x)];
  std::vector<unsigned> rank_of_part(n, 0);
  std::size_t done = 0, parts_left = count_parts(s);
  unsigned rank = 0;
  for (NodeIndex x = 0; x < n; ++x) {
    if (s.find(x) != x) continue;
    // Move on once this rank holds its share, keeping a part for each rank still to come.
    const std::size_t share = (rank + 1) * n / ranks;
    if (rank + 1 < ranks && p.nodes_per_rank[rank] > 0 && (done >= share || parts_left <= ranks - 1 - rank)) ++rank;
    rank_of_part[x] = rank;
    p.nodes_per_rank[rank] += size[x];
    done += size[x];
    --parts_left;
  }
  for (NodeIndex x = 0; x < n; ++x) p.rank_of[x] = rank_of_part[s.find(x)];
  for (const Link& l : el.links)
    if (p.rank_of[l.src] != p.rank_of[l.dst]) {
      ++p.cut_links;
      p.lookahead = std::min(p.lookahead, link_lookahead(el, l));
    }
  return p;
}

}  // namespace

PartitionMethod partition_method(const std::string& name) {
  if (name == "structure") return PartitionMethod::kStructure;
  if (name == "nodes") return PartitionMethod::kNodes;
  throw UsageError("--partition " + name + ": expected 'structure' (by SIP, then cube) or 'nodes' (node order)");
}

Partition partition(const Elaboration& el, unsigned ranks, PartitionMethod method) {
  const std::size_t n = el.nodes.size();
  if (ranks == 0) throw ConfigError("a job has at least one rank");
  if (ranks == 1) {
    Partition p;
    p.rank_of.assign(n, 0);
    p.nodes_per_rank.assign(1, n);
    return p;
  }
  unsigned depth = 0;
  if (method == PartitionMethod::kStructure)
    for (const auto& node : el.nodes)
      if (!node.group.empty())
        depth = std::max(depth, 1u + static_cast<unsigned>(std::count(node.group.begin(), node.group.end(), '/')));
  // Every group level with at least as many groups as ranks is a candidate (by SIP, by cube, ...): the one whose cut
  // leaves the largest lookahead wins, the outermost on a tie. With no such level, groups are ignored.
  std::optional<Partition> best;
  for (unsigned level = 1; level <= depth; ++level) {
    std::unordered_map<std::string_view, bool> groups;
    for (const auto& node : el.nodes)
      if (!node.group.empty()) groups.emplace(prefix(node.group, level), true);
    if (groups.size() < ranks) continue;
    Sets s = parts(el, level);
    if (count_parts(s) < ranks) continue;
    Partition p = deal(el, s, ranks);
    p.group_level = level;
    if (!best || p.lookahead > best->lookahead) best = std::move(p);
  }
  if (best) return std::move(*best);
  Sets s = parts(el, 0);
  if (const std::size_t available = count_parts(s); available < ranks)
    throw ConfigError("the system cannot be split over " + std::to_string(ranks) +
                      " ranks: links without lookahead (no latency, and a sender that promises no delay) or groups "
                      "join its " +
                      std::to_string(n) + " nodes into " + std::to_string(available) +
                      (available == 1 ? " part" : " parts"));
  return deal(el, s, ranks);
}

std::string describe(const Partition& p) {
  std::string s = std::to_string(p.ranks) + (p.ranks == 1 ? " rank" : " ranks");
  if (p.group_level > 0) s += " (groups kept whole at level " + std::to_string(p.group_level) + ")";
  s += ": ";
  if (p.ranks <= 8) {
    for (unsigned r = 0; r < p.ranks; ++r) s += (r ? " + " : "") + std::to_string(p.nodes_per_rank[r]);
    s += " nodes, ";
  } else {
    const auto [lo, hi] = std::minmax_element(p.nodes_per_rank.begin(), p.nodes_per_rank.end());
    s += std::to_string(*lo) + " to " + std::to_string(*hi) + " nodes a rank, ";
  }
  s += std::to_string(p.cut_links) + " cut links, lookahead ";
  s += p.lookahead == kNever ? std::string("none (nothing crosses)") : format_ns(ticks_to_ns(p.lookahead)) + " ns";
  return s;
}

}  // namespace kbsim::core
