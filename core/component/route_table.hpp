// The routes of one elaboration under one set of transit costs (the cost each
// node charges to pass it, which components declare). Every system built from
// one elaboration whose components declare the same costs finds the same
// routes, so they share one table: a bench that builds a fresh system per
// scenario searches each route once, not once per system. A table is used on
// one thread (a bench runner's systems, and the later runners of that thread).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kbsim/component.hpp"

namespace kbsim::core {

struct Elaboration;

struct RouteTable {
  std::vector<Tick> transit;  ///< the costs its routes were found under (fixed by the first system to route)
  bool bound = false;         ///< whether `transit` is fixed yet
  std::unordered_map<std::uint64_t, std::unique_ptr<Route>> routes;  ///< by (view, from, to)
  /// What a search knows of a node: its distance so far and the out-port (in port order) that reaches it, with
  /// a flag once it is settled.
  struct [[gnu::packed]] Mark {
    static constexpr std::uint32_t kSettled = 1u << 31, kNoPort = kSettled - 1;
    Tick dist = kNever;
    std::uint32_t via = kNoPort;
    bool settled() const noexcept { return (via & kSettled) != 0; }
    std::uint32_t port() const noexcept { return via & kNoPort; }
  };
  /// One Dijkstra search per (view, source), resumed for each new destination and stopped as soon as it is
  /// settled: every route from a source costs one search in all (a collective's all-pairs queues need thousands
  /// of routes), and a source with one destination pays no more than a search for it. A search reaches a few
  /// hundred nodes of thousands, so it keeps only those: the marks live in the table's scratch while it runs
  /// (one array over all nodes, stamped, so nothing is cleared between searches) and are put away when another
  /// search needs the scratch.
  struct Search {
    std::vector<NodeIndex> reached;  ///< the nodes it has reached, in that order
    std::vector<Mark> kept;          ///< their marks, while the scratch holds another search's
    /// Reached nodes by (distance << 32 | node order), least first: one key, compared without branches.
    std::priority_queue<unsigned __int128, std::vector<unsigned __int128>, std::greater<>> queue;
  };
  struct Stamped {
    Mark mark;
    std::uint32_t stamp = 0;  ///< the mark is the current search's when this is the table's stamp
  };
  std::vector<Stamped> scratch;  ///< per node, sized at the first search
  std::uint32_t stamp = 0;
  Search* holder = nullptr;  ///< the search whose marks are in the scratch

  /// Make the scratch hold `s`'s marks (putting the holder's away); `nodes`: the elaboration's node count.
  void hold(Search& s, std::size_t nodes) {
    if (holder == &s) return;
    put_away();
    if (scratch.size() != nodes) scratch.assign(nodes, Stamped{});
    if (++stamp == 0) {  // after 2^32 switches: start the stamps again
      for (Stamped& m : scratch) m.stamp = 0;
      stamp = 1;
    }
    for (std::size_t i = 0; i < s.reached.size(); ++i) scratch[s.reached[i]] = {s.kept[i], stamp};
    s.kept = {};  // (its memory too: a kept search costs only what it reached)
    holder = &s;
  }
  /// Write the holder's marks back into it.
  void put_away() {
    if (!holder) return;
    holder->kept.resize(holder->reached.size());
    for (std::size_t i = 0; i < holder->reached.size(); ++i) holder->kept[i] = scratch[holder->reached[i]].mark;
    holder = nullptr;
  }
  std::unordered_map<std::uint64_t, Search> searches;

  /// The table for a system of `el` on this thread: the one of a recent elaboration with the same routing inputs
  /// (a sweep's points of one topology, each with a runner of its own, search each route once), or a new one.
  /// Tables are kept, with the elaboration that made them, for this thread's last few such elaborations.
  static std::shared_ptr<RouteTable> for_elaboration(const std::shared_ptr<const Elaboration>& el);
};

}  // namespace kbsim::core
