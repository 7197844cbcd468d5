// Text views of a resolved graph for other tools: a Graphviz DOT digraph and a Mermaid flowchart
// (`kbsim topology --dot FILE`, `--mermaid FILE`). Generic over any graph: nodes are grouped by their group path
// ("a/b": a cluster or subgraph "a/b" inside "a"), edges labelled by kind and bandwidth; the text follows the graph's
// order, so the same graph always gives the same text.
#pragma once

#include <string>

#include "kbsim/graph.hpp"

namespace kbsim::core {

/// The graph as a Graphviz DOT digraph: ids quoted, each node labelled "id\nimpl", each group a nested
/// `subgraph cluster_N`, each edge labelled "kind\nB GB/s" (no bandwidth when unlimited).
std::string graph_dot(const Graph& g);

/// The graph as a Mermaid `flowchart LR`: node k is `nK` (Mermaid ids cannot carry every character) labelled
/// "id<br/>impl", each group a nested `subgraph gN["path"]`, each edge labelled as in graph_dot.
std::string graph_mermaid(const Graph& g);

}  // namespace kbsim::core
