#include "component/op_log.hpp"

#include <algorithm>

namespace kbsim::core {

void OpLog::start(NodeIndex node, std::string_view id, const Message& msg, Tick now) {
  if (pending_.count({&msg, node})) return;  // delivered again before it left: the first delivery counts
  OpRecord r;
  r.component = node;  // describe_op may ask which node services it
  r.component_id = id;
  if (!msg.describe_op(r)) return;  // captured now: the message may change before its record ends
  r.t_start = now;
  pending_.emplace(Key{&msg, node}, std::move(r));
}

void OpLog::restart(NodeIndex node, const Message& msg, Tick now) {
  if (auto it = pending_.find({&msg, node}); it != pending_.end()) it->second.t_start = now;
}

void OpLog::end(NodeIndex node, const Message& msg, Tick at) {
  auto it = pending_.find({&msg, node});
  if (it == pending_.end()) return;
  OpRecord r = std::move(it->second);
  pending_.erase(it);
  r.t_end = at;
  record(std::move(r));
}

void OpLog::record(OpRecord r) {
  r.seq = seq_++;
  for (const Sink& s : sinks_) s(r);
  if (keep_) records_.push_back(std::move(r));
}

std::vector<const OpRecord*> OpLog::by_start() const {
  std::vector<const OpRecord*> out;
  out.reserve(records_.size());
  for (const OpRecord& r : records_) out.push_back(&r);
  std::stable_sort(out.begin(), out.end(),
                   [](const OpRecord* a, const OpRecord* b) { return a->t_start < b->t_start; });
  return out;
}

Tick OpLog::watermark() const noexcept {
  Tick w = kNever;
  for (const auto& [key, r] : pending_) w = std::min(w, r.t_start);
  return w;
}

}  // namespace kbsim::core
