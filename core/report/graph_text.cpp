#include "report/graph_text.hpp"

#include <string_view>
#include <unordered_map>
#include <vector>

#include "kbsim/errors.hpp"
#include "kbsim/text.hpp"

namespace kbsim::core {

namespace {

/// One group of the tree of group paths; index 0 is the root, the nodes of no group.
struct Cluster {
  std::string path;                   ///< the full group path ("a/b")
  std::vector<std::size_t> nodes;     ///< node indices, in graph order
  std::vector<std::size_t> children;  ///< cluster indices, in the order the graph first names them
};

using ClusterIndex = std::unordered_map<std::string, std::size_t>;

/// The cluster of `group`, made (with its parents) when the graph names it first. Empty segments are skipped.
std::size_t cluster_of(std::vector<Cluster>& tree, ClusterIndex& index, const std::string& group) {
  std::size_t at = 0;
  for (std::size_t start = 0; start < group.size();) {
    std::size_t end = group.find('/', start);
    if (end == std::string::npos) end = group.size();
    if (end > start) {
      auto [it, fresh] = index.try_emplace(group.substr(0, end), tree.size());
      if (fresh) {
        tree.push_back({it->first, {}, {}});
        tree[at].children.push_back(it->second);
      }
      at = it->second;
    }
    start = end + 1;
  }
  return at;
}

/// The tree of the graph's groups, each node in its innermost group.
std::vector<Cluster> group_tree(const Graph& g) {
  std::vector<Cluster> tree(1);
  ClusterIndex index;
  for (std::size_t n = 0; n < g.nodes.size(); ++n) tree[cluster_of(tree, index, g.nodes[n].group)].nodes.push_back(n);
  return tree;
}

/// "64 GB/s", or "" for an unlimited link.
std::string bandwidth_text(const EdgeSpec& e) {
  return e.bandwidth_gbs > 0 ? format_number(e.bandwidth_gbs) + " GB/s" : std::string();
}

/// The node indices by id, to name an edge's ends.
std::unordered_map<std::string_view, std::size_t> node_index(const Graph& g) {
  std::unordered_map<std::string_view, std::size_t> out;
  out.reserve(g.nodes.size());
  for (std::size_t n = 0; n < g.nodes.size(); ++n) out.emplace(g.nodes[n].id, n);
  return out;
}

// ---- DOT ----

/// `s` inside a DOT quoted string: quotes and backslashes escaped, a newline as "\n".
std::string dot_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string dot_quoted(std::string_view s) { return '"' + dot_escape(s) + '"'; }

/// Cluster `k` of the tree (the root: its nodes only), indented by `depth` levels.
void dot_cluster(std::string& out, const Graph& g, const std::vector<Cluster>& tree, std::size_t k, int depth) {
  const std::string pad(2 * static_cast<std::size_t>(depth), ' ');
  if (k != 0) {
    out += pad.substr(2) + "subgraph cluster_" + std::to_string(k) + " {\n";
    out += pad + "label=" + dot_quoted(tree[k].path) + ";\n";
  }
  for (std::size_t n : tree[k].nodes) {
    const NodeSpec& node = g.nodes[n];
    out += pad + dot_quoted(node.id) + " [label=\"" + dot_escape(node.id) + "\\n" + dot_escape(node.impl) + "\"];\n";
  }
  for (std::size_t child : tree[k].children) dot_cluster(out, g, tree, child, depth + 1);
  if (k != 0) out += pad.substr(2) + "}\n";
}

// ---- Mermaid ----

/// `s` inside a Mermaid quoted label: the characters Mermaid reads specially as entity codes ("#quot;").
std::string mermaid_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '"': out += "#quot;"; break;
      case '#': out += "#35;"; break;
      case '&': out += "#amp;"; break;
      case '<': out += "#lt;"; break;
      case '>': out += "#gt;"; break;
      case '|': out += "#124;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "#" + std::to_string(static_cast<unsigned char>(c)) + ";";
        } else {
          out += c;
        }
    }
  }
  return out;
}

/// The Mermaid id of the node named `id` ("n" and its index); Error when the graph has no such node.
std::string mermaid_id(const std::unordered_map<std::string_view, std::size_t>& index, const std::string& id) {
  auto it = index.find(id);
  if (it == index.end()) throw Error("graph: an edge names node '" + id + "', which is not in the graph");
  return "n" + std::to_string(it->second);
}

/// Cluster `k` as a Mermaid subgraph (the root: its nodes only), indented by `depth` levels.
void mermaid_cluster(std::string& out, const Graph& g, const std::vector<Cluster>& tree, std::size_t k, int depth) {
  const std::string pad(2 * static_cast<std::size_t>(depth), ' ');
  if (k != 0) out += pad.substr(2) + "subgraph g" + std::to_string(k) + "[\"" + mermaid_escape(tree[k].path) + "\"]\n";
  for (std::size_t n : tree[k].nodes) {
    const NodeSpec& node = g.nodes[n];
    out +=
        pad + "n" + std::to_string(n) + "[\"" + mermaid_escape(node.id) + "<br/>" + mermaid_escape(node.impl) + "\"]\n";
  }
  for (std::size_t child : tree[k].children) mermaid_cluster(out, g, tree, child, depth + 1);
  if (k != 0) out += pad.substr(2) + "end\n";
}

}  // namespace

std::string graph_dot(const Graph& g) {
  std::string out = "digraph topology {\n  node [shape=box];\n";
  dot_cluster(out, g, group_tree(g), 0, 1);
  for (const EdgeSpec& e : g.edges) {
    const std::string bw = bandwidth_text(e);
    out += "  " + dot_quoted(e.src) + " -> " + dot_quoted(e.dst) + " [label=\"" + dot_escape(e.kind) +
           (bw.empty() ? "" : "\\n" + bw) + "\"];\n";
  }
  return out + "}\n";
}

std::string graph_mermaid(const Graph& g) {
  std::string out = "flowchart LR\n";
  mermaid_cluster(out, g, group_tree(g), 0, 1);
  const auto index = node_index(g);
  for (const EdgeSpec& e : g.edges) {
    const std::string bw = bandwidth_text(e);
    out += "  " + mermaid_id(index, e.src) + " -->|\"" + mermaid_escape(e.kind) + (bw.empty() ? "" : "<br/>" + bw) +
           "\"| " + mermaid_id(index, e.dst) + "\n";
  }
  return out;
}

}  // namespace kbsim::core
