#include "report/json.hpp"

#include <cstdio>

#include "kbsim/errors.hpp"
#include "plugin/params_resolve.hpp"
#include "plugin/registry.hpp"

namespace kbsim::core {

void write_param_value(JsonWriter& w, const ParamValue& v) {
  std::visit([&](const auto& x) { w.value(x); }, v);
}

void write_params(JsonWriter& w, const Params& p) {
  w.begin_object();
  for (const auto& e : p.entries()) {
    w.key(e.name);
    write_param_value(w, e.value);
  }
  w.end_object();
}

void write_metrics_fields(JsonWriter& w, const Metrics& m) {
  for (const auto& e : m.entries()) {
    if (!m.is_list()) w.key(e.key);
    if (e.node) {
      write_metrics(w, *e.node);
    } else {
      std::visit([&](const auto& x) { w.value(x); }, e.scalar);
    }
  }
}

void write_metrics(JsonWriter& w, const Metrics& m) {
  if (m.is_list()) {
    w.begin_array();
  } else {
    w.begin_object();
  }
  write_metrics_fields(w, m);
  if (m.is_list()) {
    w.end_array();
  } else {
    w.end_object();
  }
}

void write_graph(JsonWriter& w, const Graph& g, const Registry& registry) {
  w.begin_object();
  w.field("source", g.source);
  const bool distance = g.route_metric == RouteMetric::kDistance;
  w.field("routing", std::string(route_metric_name(g.route_metric)));
  w.key("nodes");
  w.begin_array();
  for (const auto& n : g.nodes) {
    const ComponentType& type = registry.component_for_impl(n.impl, n.origin);
    Params p = resolve_params(type.info.params, n.params, n.impl, n.origin);
    w.begin_object();
    w.field("id", n.id);
    w.field("impl", n.impl);
    w.field("type", type.info.type);
    if (!n.group.empty()) w.field("group", n.group);
    w.key("params");
    write_params(w, p);
    w.end_object();
  }
  w.end_array();
  w.key("edges");
  w.begin_array();
  for (const auto& e : g.edges) {
    w.begin_object();
    w.field("src", e.src);
    w.field("dst", e.dst);
    w.field("kind", e.kind);
    w.field("bandwidth_gbs", e.bandwidth_gbs);
    w.field("latency_ns", e.latency_ns);
    w.field("flit_bytes", std::uint64_t{e.flit_bytes});
    if (distance) w.field("route_mm", e.route_mm);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace kbsim::core
