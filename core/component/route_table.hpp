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
  /// One Dijkstra search per (view, source), resumed for each new destination and stopped as soon as it is
  /// settled: every route from a source costs one search in all (a collective's all-pairs queues need
  /// thousands of routes), and a source with one destination pays no more than a search for it.
  /// What a search knows of a node: its distance so far and the out-port (in port order) that reaches it, with
  /// a flag once it is settled. 12 bytes: a search from each of a collective's thousands of sources keeps one
  /// per node.
  struct [[gnu::packed]] Mark {
    static constexpr std::uint32_t kSettled = 1u << 31, kNoPort = kSettled - 1;
    Tick dist = kNever;
    std::uint32_t via = kNoPort;
    bool settled() const noexcept { return (via & kSettled) != 0; }
    std::uint32_t port() const noexcept { return via & kNoPort; }
  };
  struct Search {
    std::vector<Mark> marks;  ///< per node
    std::priority_queue<std::pair<Tick, NodeIndex>, std::vector<std::pair<Tick, NodeIndex>>, std::greater<>> queue;
  };
  std::unordered_map<std::uint64_t, Search> searches;

  /// The table for a system of `el` on this thread: the one of a recent elaboration with the same routing inputs
  /// (a sweep's points of one topology, each with a runner of its own, search each route once), or a new one.
  /// Tables are kept, with the elaboration that made them, for this thread's last few such elaborations.
  static std::shared_ptr<RouteTable> for_elaboration(const std::shared_ptr<const Elaboration>& el);

  /// A copy of its own (the routes as new objects: the old ones stay where messages may point to them).
  std::shared_ptr<RouteTable> copy() const {
    auto t = std::make_shared<RouteTable>();
    t->transit = transit;
    t->bound = bound;
    for (const auto& [key, r] : routes) t->routes.emplace(key, std::make_unique<Route>(*r));
    t->searches = searches;
    return t;
  }
};

}  // namespace kbsim::core
