// JSON output: results.json, the resolved graph, metrics
// (written with the SDK's JSON kit, kbsim/json/json.hpp).
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "kbsim/graph.hpp"
#include "kbsim/json/json.hpp"
#include "kbsim/metrics.hpp"

namespace kbsim::core {

class Registry;
using json::JsonWriter;
using json::write_json_file;
using json::write_json_stdout;
}  // namespace kbsim::core
namespace kbsim::core {

void write_param_value(JsonWriter& w, const ParamValue& v);
/// Every resolved parameter as one JSON object, in declaration order.
void write_params(JsonWriter& w, const Params& p);
void write_metrics(JsonWriter& w, const Metrics& m);
/// The entries of `m` as fields of the object being written (no braces of its own).
void write_metrics_fields(JsonWriter& w, const Metrics& m);
/// The graph with every node's parameters resolved against its component's declarations.
void write_graph(JsonWriter& w, const Graph& g, const Registry& registry);

}  // namespace kbsim::core
