#include "topology/topology.hpp"

#include <cmath>
#include <memory>
#include <unordered_map>

#include "kbsim/config/frontend.hpp"
#include "kbsim/plugin.hpp"
#include "kbsim/text.hpp"
#include "plugin/params_resolve.hpp"
#include "plugin/registry.hpp"

namespace kbsim::core {

namespace {

using config::check_keys;
using config::Origins;
using config::scalar_number;
using config::scalar_value;
using config::YamlSource;

std::vector<std::string> keys_of(const YAML::Node& map) {
  std::vector<std::string> out;
  for (const auto& kv : map) out.push_back(kv.first.Scalar());
  return out;
}

}  // namespace

void apply_override(YamlSource& src, Origins& origins, const std::string& text, const std::string& label) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw ConfigError(label + ": expected key=value");
  std::string path = text.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(text.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw ConfigError(label + ": cannot parse the value: " + e.msg);
  }
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    auto dot = path.find('.', start);
    parts.push_back(path.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  YAML::Node cur;
  cur.reset(src.root());
  std::string walked;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    bool last = i + 1 == parts.size();
    std::string here = walked.empty() ? part : walked + "." + part;
    if (cur.IsSequence()) {
      YAML::Node found;
      bool ok = false;
      char* end = nullptr;
      unsigned long idx = std::strtoul(part.c_str(), &end, 10);
      if (!part.empty() && *end == '\0') {
        if (idx < cur.size()) {
          found.reset(cur[idx]);
          ok = true;
        }
      } else {
        for (std::size_t k = 0; k < cur.size() && !ok; ++k)
          if (cur[k].IsMap() && cur[k]["id"] && cur[k]["id"].Scalar() == part) {
            found.reset(cur[k]);
            ok = true;
          }
      }
      if (!ok) throw ConfigError(label + ": '" + here + "' matches no item (by index or id)");
      if (last) {
        found = value;  // assigns the item's content
        origins.add_override(found, label);
      } else {
        cur.reset(found);
      }
    } else if (cur.IsMap() || (cur.IsNull() && last)) {
      YAML::Node child = cur[part];
      if (last) {
        cur[part] = value;
        for (const auto& kv : cur)  // name the override for errors about the key or the value
          if (kv.first.Scalar() == part) {
            origins.add_override(kv.first, label);
            origins.add_override(kv.second, label);
          }
      } else {
        if (!child) throw ConfigError(label + ": no key '" + here + "'" + suggest(part, keys_of(cur)));
        cur.reset(child);
      }
    } else {
      throw ConfigError(label + ": '" + walked + "' is a value, not a map or list");
    }
    walked = here;
  }
}

namespace {

double number(const YAML::Node& n, const std::string& key, const std::string& where) {
  if (std::optional<double> v = scalar_number(n)) return *v;
  throw ConfigError(where + ": '" + key + "' must be a number, got '" + n.Scalar() + "'");
}

/// The longest wire and the slowest one per millimetre an edge may have: a kilometre, a microsecond per millimetre.
constexpr double kMaxWireMm = 1e6;
constexpr double kMaxNsPerMm = 1e3;

struct EdgeDefaults {
  double bandwidth_gbs = 0.0;
  double latency_ns = 0.0;
  double ns_per_mm = -1.0;  // unset
  std::uint32_t flit_bytes = 256;
  std::string kind = "link";
};

const std::vector<std::string> kEdgeKeys = {"src",       "dst",        "bandwidth_gbs", "latency_ns", "distance_mm",
                                            "ns_per_mm", "flit_bytes", "kind",          "bidir"};
const std::vector<std::string> kDefaultKeys = {"bandwidth_gbs", "latency_ns", "ns_per_mm", "flit_bytes", "kind"};

/// Reads the unit-carrying numeric keys shared by edges and defaults.
void read_link_values(const YAML::Node& map, EdgeDefaults& d, double* distance_mm, const Origins& o,
                      const std::string& scope) {
  for (const auto& kv : map) {
    std::string key = kv.first.Scalar();
    std::string at = o.where(kv.second, o.scope(kv.second, scope));
    if (key == "bandwidth_gbs" || key == "latency_ns" || key == "ns_per_mm" || key == "distance_mm" ||
        key == "flit_bytes") {
      if (!kv.second.IsScalar()) throw ConfigError(at + ": '" + key + "' must be a number");
      double v = number(kv.second, key, at);
      const std::string& written = kv.second.Scalar();  // errors show the number as the user wrote it
      if (!std::isfinite(v) || v < 0)
        throw ConfigError(at + ": '" + key + "' must be a finite number >= 0, got " + written);
      if (key == "latency_ns" && v > kMaxTimeNs)
        throw ConfigError(at + ": 'latency_ns' " + written + " is beyond the simulatable range (at most 1e15 ns)");
      // A wire's delay (distance_mm x ns_per_mm) stays far inside that range: each is refused at its own key.
      if (key == "distance_mm" && v > kMaxWireMm)
        throw ConfigError(at + ": 'distance_mm' " + written + " is longer than a wire can be (at most 1e6 mm)");
      if (key == "ns_per_mm" && v > kMaxNsPerMm)
        throw ConfigError(at + ": 'ns_per_mm' " + written + " is slower than a wire can be (at most 1000 ns per mm)");
      if (key == "bandwidth_gbs" && v > 0 && v < kMinBandwidthGbs)
        throw ConfigError(at + ": 'bandwidth_gbs' " + written +
                          " is too small to simulate (0 means unlimited; otherwise at least 1e-6)");
      if (key == "bandwidth_gbs") d.bandwidth_gbs = v;
      if (key == "latency_ns") d.latency_ns = v;
      if (key == "ns_per_mm") d.ns_per_mm = v;
      if (key == "distance_mm" && distance_mm) *distance_mm = v;
      if (key == "flit_bytes") {
        if (v < 1 || std::floor(v) != v || v > 1e9)
          throw ConfigError(at + ": 'flit_bytes' must be a whole number of bytes >= 1");
        d.flit_bytes = static_cast<std::uint32_t>(v);
      }
    } else if (key == "kind") {
      if (!kv.second.IsScalar() || kv.second.Scalar().empty())
        throw ConfigError(at + ": 'kind' must be a name, e.g. noc");
      d.kind = kv.second.Scalar();
    }
  }
}

Graph build_graph(YamlSource& src, Origins& origins) {
  Graph g;
  g.source = src.name();
  YAML::Node& root = src.root();
  auto where = [&](const YAML::Node& n) { return origins.where(n); };
  if (!root.IsMap()) throw ConfigError(src.where(root) + ": a topology is a map with 'nodes' and 'edges'");
  check_keys(root, {"defaults", "routing", "nodes", "edges"}, "topology", where);
  if (YAML::Node r = root["routing"]) {
    if (!r.IsScalar() || !parse_route_metric(r.Scalar(), g.route_metric))
      throw ConfigError(where(r) + ": 'routing' must be latency (least time) or distance (least distance_mm)");
  }

  EdgeDefaults defaults;
  if (YAML::Node d = root["defaults"]) {
    if (!d.IsMap()) throw ConfigError(where(d) + ": 'defaults' must be a map");
    check_keys(d, kDefaultKeys, "defaults", where);
    read_link_values(d, defaults, nullptr, origins, origins.scope(d, ""));
  }

  YAML::Node nodes = root["nodes"];
  if (!nodes || !nodes.IsSequence()) throw ConfigError(where(root) + ": 'nodes' must be a list");
  for (const auto& n : nodes) {
    std::string scope = origins.scope(n, "");
    auto at = [&](const YAML::Node& x) { return origins.where(x, origins.scope(x, scope)); };
    if (!n.IsMap()) throw ConfigError(at(n) + ": a node is a map with id, impl and params");
    check_keys(n, {"id", "impl", "params", "group"}, "node", at);
    if (!n["id"] || !n["impl"]) throw ConfigError(at(n) + ": a node needs 'id' and 'impl'");
    for (const char* key : {"id", "impl"})
      if (!n[key].IsScalar() || n[key].Scalar().empty())
        throw ConfigError(at(n[key]) + ": '" + key + "' must be a name");
    NodeSpec spec;
    spec.id = n["id"].Scalar();
    spec.impl = n["impl"].Scalar();
    spec.origin = at(n["impl"]);
    if (YAML::Node g = n["group"]) {
      if (!g.IsScalar()) throw ConfigError(at(g) + ": 'group' must be a path like sip0/cube3");
      spec.group = g.Scalar();
    }
    if (YAML::Node p = n["params"]) {
      if (!p.IsMap() && !p.IsNull()) throw ConfigError(at(p) + ": 'params' must be a map");
      std::string pscope = origins.scope(p, scope);
      for (const auto& kv : p) {
        if (!kv.second.IsScalar())
          throw ConfigError(origins.where(kv.second, pscope) + ": parameter '" + kv.first.Scalar() +
                            "' must be a single value");
        spec.params.push_back(
            {kv.first.Scalar(), scalar_value(kv.second), origins.where(kv.second, origins.scope(kv.second, pscope))});
      }
    }
    g.nodes.push_back(std::move(spec));
  }

  YAML::Node edges = root["edges"];
  if (edges && !edges.IsSequence()) throw ConfigError(where(edges) + ": 'edges' must be a list");
  if (edges) {
    for (const auto& e : edges) {
      std::string scope = origins.scope(e, "");
      auto at = [&](const YAML::Node& x) { return origins.where(x, origins.scope(x, scope)); };
      if (!e.IsMap()) throw ConfigError(at(e) + ": an edge is a map with src and dst");
      check_keys(e, kEdgeKeys, "edge", at);
      if (!e["src"] || !e["dst"]) throw ConfigError(at(e) + ": an edge needs 'src' and 'dst'");
      for (const char* key : {"src", "dst"})
        if (!e[key].IsScalar()) throw ConfigError(at(e[key]) + ": '" + key + "' must be a node id");
      if (e["latency_ns"] && e["distance_mm"])
        throw ConfigError(at(e["distance_mm"]) + ": give latency_ns or distance_mm, not both");
      EdgeDefaults v = defaults;
      double distance = -1.0;
      read_link_values(e, v, &distance, origins, scope);
      if (distance >= 0) {
        if (v.ns_per_mm < 0)
          throw ConfigError(at(e["distance_mm"]) + ": distance_mm needs ns_per_mm (on the edge or in defaults)");
        v.latency_ns = distance * v.ns_per_mm;
      }
      bool bidir = false;
      if (YAML::Node b = e["bidir"]) {
        ParamValue bv = scalar_value(b);
        if (!std::holds_alternative<bool>(bv)) throw ConfigError(at(b) + ": 'bidir' must be true or false");
        bidir = std::get<bool>(bv);
      }
      EdgeSpec spec{
          e["src"].Scalar(),      e["dst"].Scalar(), v.bandwidth_gbs, v.latency_ns, v.flit_bytes, v.kind, at(e),
          std::max(distance, 0.0)};
      g.edges.push_back(spec);
      if (bidir) {
        std::swap(spec.src, spec.dst);
        g.edges.push_back(std::move(spec));
      }
    }
  }

  // Dangling edges and duplicate ids are caught here, before any plugin is involved.
  std::unordered_map<std::string, const NodeSpec*> ids;
  for (const auto& n : g.nodes)
    if (auto [it, fresh] = ids.emplace(n.id, &n); !fresh)
      throw ConfigError(n.origin + ": duplicate node id '" + n.id + "' (first at " + it->second->origin + ")");
  std::vector<std::string> names;
  for (const auto& n : g.nodes) names.push_back(n.id);
  for (const auto& e : g.edges)
    for (const std::string* end : {&e.src, &e.dst})
      if (!ids.count(*end))
        throw ConfigError(e.origin + ": edge " + e.src + " -> " + e.dst + " names unknown node '" + *end + "'" +
                          suggest(*end, names));
  return g;
}

/// Component parameters as the registry's declarations resolve them.
class RegistryComponents final : public config::Components {
 public:
  explicit RegistryComponents(const Registry& registry) : registry_(registry) {}
  Params resolve(const std::string& impl, const std::vector<RawParam>& attrs,
                 const std::string& origin) const override {
    return resolve_params(registry_.component_for_impl(impl, origin).info.params, attrs, impl, origin,
                          [&] { return registry_.mapping_note(impl); });
  }

 private:
  const Registry& registry_;
};

/// The document after overrides, and the front-end that claims it (none: the explicit form).
struct Document {
  explicit Document(YamlSource source) : src(std::move(source)), origins(src) {}
  YamlSource src;
  Origins origins;
  std::unique_ptr<config::FrontEnd> frontend;
};

std::unique_ptr<Document> open(YamlSource src, const std::vector<std::string>& overrides, const Registry& registry) {
  auto doc = std::make_unique<Document>(std::move(src));
  apply_overrides(doc->src, doc->origins, overrides);
  for (const auto& [name, entry] : registry.frontends()) {
    std::unique_ptr<config::FrontEnd> fe(entry.type->create());
    if (fe->claims(doc->src.root())) {
      doc->frontend = std::move(fe);
      break;
    }
  }
  return doc;
}

Graph compile(Document& doc, const Registry& registry) {
  if (doc.frontend) return doc.frontend->compile(doc.origins, RegistryComponents(registry));
  return build_graph(doc.src, doc.origins);
}

}  // namespace

std::unique_ptr<config::Components> components_of(const Registry& registry) {
  return std::make_unique<RegistryComponents>(registry);
}

void apply_overrides(YamlSource& src, Origins& origins, const std::vector<std::string>& overrides) {
  for (const auto& o : overrides) apply_override(src, origins, o, "--set " + o);
}

Graph load_topology(const std::filesystem::path& file, const std::vector<std::string>& overrides,
                    const Registry& registry) {
  return compile(*open(YamlSource::load(file), overrides, registry), registry);
}

Graph parse_topology(const std::string& text, const std::string& name, const std::vector<std::string>& overrides,
                     const Registry& registry) {
  return compile(*open(YamlSource::parse(text, name), overrides, registry), registry);
}

std::vector<std::filesystem::path> draw_topology(const std::filesystem::path& file,
                                                 const std::vector<std::string>& overrides, const Registry& registry,
                                                 const std::filesystem::path& dir) {
  auto doc = open(YamlSource::load(file), overrides, registry);
  if (!doc->frontend)
    throw ConfigError(
        file.string() +
        ": no topology front-end claims this document, and the explicit nodes+edges form has no pictures");
  const RegistryComponents components(registry);
  doc->frontend->compile(doc->origins, components);  // a document that does not compile is not drawn
  std::vector<std::filesystem::path> files = doc->frontend->draw(doc->origins, components, dir);
  if (files.empty()) throw ConfigError(file.string() + ": its topology front-end draws no pictures");
  return files;
}

std::string view_topology(const std::filesystem::path& file, const std::vector<std::string>& overrides,
                          const Registry& registry, std::string_view name) {
  auto doc = open(YamlSource::load(file), overrides, registry);
  if (!doc->frontend) return {};
  return doc->frontend->view(doc->origins, RegistryComponents(registry), name);
}

}  // namespace kbsim::core
