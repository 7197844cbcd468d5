// JSON output (RapidJSON): results.json, the resolved graph, metrics.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "kbsim/graph.hpp"
#include "kbsim/metrics.hpp"

namespace kbsim::core {

class Registry;
class JsonWriter;
class OpLog;

/// Writes JSON to a file atomically: into "<file>.tmp", renamed on success,
/// removed on failure, so a failed run leaves no half-written file.
void write_json_file(const std::filesystem::path& file, const std::function<void(JsonWriter&)>& body);
/// Writes JSON to stdout.
void write_json_stdout(const std::function<void(JsonWriter&)>& body);

/// A thin facade over RapidJSON's pretty writer, so callers need not see it.
class JsonWriter {
 public:
  virtual ~JsonWriter() = default;
  virtual void begin_object() = 0;
  virtual void end_object() = 0;
  virtual void begin_array() = 0;
  virtual void end_array() = 0;
  virtual void key(const std::string& k) = 0;
  virtual void value(const std::string& v) = 0;
  virtual void value(const char* v) = 0;
  virtual void value(double v) = 0;
  virtual void value(std::int64_t v) = 0;
  virtual void value(std::uint64_t v) = 0;
  virtual void value(bool v) = 0;
  void value(int v) { value(static_cast<std::int64_t>(v)); }
  void value(unsigned v) { value(static_cast<std::uint64_t>(v)); }
  template <class T>
  void field(const std::string& k, const T& v) {
    key(k);
    value(v);
  }
};

void write_param_value(JsonWriter& w, const ParamValue& v);
/// Every resolved parameter as one JSON object, in declaration order.
void write_params(JsonWriter& w, const Params& p);
void write_metrics(JsonWriter& w, const Metrics& m);
/// The graph with every node's parameters resolved against its component's declarations.
void write_graph(JsonWriter& w, const Graph& g, const Registry& registry);
/// The op log's records in stable t_start order (ADR-0052 D2), times in ns.
void write_op_log(JsonWriter& w, const OpLog& log);

}  // namespace kbsim::core
