// The op log as a JSON file: every kept record in stable start order, times in ns.
#pragma once

#include "kbsim/json/json.hpp"
#include "kbsim/op_record.hpp"

namespace kbsim::op_log_file {

/// {"records": [{seq, t_start, t_end, component_id, op_kind, op_name, params, dependency_ids}, ...]}
void write_op_log(json::JsonWriter& w, const OpLogView& log);

}  // namespace kbsim::op_log_file
