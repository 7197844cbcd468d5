#include "op_log_json.hpp"

#include <string>
#include <variant>

namespace kbsim::op_log_file {

namespace {
void write_record(json::JsonWriter& w, const OpRecord& r) {
  w.begin_object();
  w.field("seq", r.seq);
  w.field("t_start", ticks_to_ns(r.t_start));
  w.field("t_end", ticks_to_ns(r.t_end));
  w.field("component_id", std::string(r.component_id));
  w.field("op_kind", std::string(r.kind));
  w.field("op_name", r.name);
  w.key("params");
  w.begin_object();
  for (const OpParam& p : r.params) {
    w.key(p.key);
    std::visit([&](const auto& v) { w.value(v); }, p.value);
  }
  w.end_object();
  w.key("dependency_ids");
  w.begin_array();
  for (std::uint64_t d : r.dependency_ids) w.value(d);
  w.end_array();
  w.end_object();
}
}  // namespace

void write_op_log(json::JsonWriter& w, const OpLogView& log) {
  w.begin_object();
  w.key("records");
  w.begin_array();
  for (const OpRecord* r : log.by_start()) write_record(w, *r);
  w.end_array();
  w.end_object();
}

}  // namespace kbsim::op_log_file
