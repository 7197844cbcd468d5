// Base for the control-plane CPUs that relay host commands (IO_CPU, M_CPU):
// they pay their overhead once per message, fan a command out as 0-byte legs,
// merge the legs' answers (HostCommand::merge) and answer once all are in:
// to the client that submitted it here, or back along the route it came.
// Under FailurePolicy::kFailFast a failed answer is passed on at once and the
// answers still out are dropped when they arrive.
#pragma once

#include <string_view>
#include <unordered_map>

#include "kbsim/ahbm/host_command.hpp"
#include "kbsim/ahbm/memory_node.hpp"

namespace kbsim::ahbm {

class CommandNode : public MemoryNode, public CommandTarget {
 public:
  /// `overhead`: the node's overhead parameter (paid once per message); `answers_stat`: the statistic that counts
  /// merged answers.
  CommandNode(const ComponentContext& ctx, const FloatParam& overhead, const StatDef& answers_stat)
      : MemoryNode(ctx), overhead_(overhead_param(overhead, true)), answers_(stat(answers_stat)) {}

  void setup() override { memory_view_ = find_view("memory"); }

  /// A host command handed to this node directly.
  void submit(Ref<HostCommand> cmd, HostCommand::Client* client) override {
    cmd->client = client;
    cmd->t_issue = now();
    schedule(overhead_, 0, std::move(cmd));
  }

  void on_message(PortIndex, Ref<Message> msg) override {
    if (!msg->is<HostCommand>()) request(msg);  // anything else must be a memory request
    schedule(overhead_, 0, std::move(msg));     // every message pays the overhead once
  }

  void on_timer(std::uint64_t, Ref<Message> msg) override {
    if (!msg->is<HostCommand>()) return on_memory(msg->as<MemRequest>());
    Ref<HostCommand> cmd(&msg->as<HostCommand>());
    if (!cmd->is_response) return on_command(std::move(cmd));
    ++answers_.count;
    Ref<HostCommand> parent = std::move(cmd->parent);
    auto it = parent ? pending_.find(parent.get()) : pending_.end();
    if (it == pending_.end()) fail("an answer arrived for a command it did not fan out");
    Pending& p = it->second;
    const bool dropped = p.answered;  // fail-fast: the command was answered already
    if (!dropped) parent->merge(*cmd);
    const bool fail_fast = !dropped && !parent->completion.ok && parent->failure_policy == FailurePolicy::kFailFast;
    p.answered = p.answered || fail_fast;
    const bool last = --p.legs == 0;
    if (last) pending_.erase(it);  // (the legs still out hold the parent, so its address is not reused before)
    if (dropped || (!last && !fail_fast)) return;
    if (!parent->completion.ok) parent->summarize_failures();
    answer(std::move(parent));
  }

 protected:
  virtual void on_command(Ref<HostCommand> cmd) = 0;
  virtual void on_memory(MemRequest& r) = 0;

  ViewId memory_view() const noexcept { return memory_view_; }

  /// `cmd` is answered once `legs` answers are merged into it.
  void expect_answers(const HostCommand& cmd, unsigned legs) { pending_[&cmd] = {legs, false}; }
  /// Send a 0-byte leg to `to` in the memory view; its answer comes back here.
  void send_leg(Ref<HostCommand> leg, NodeIndex to) {
    leg->initiator = index();
    leg->bytes = 0;
    const Route& route = route_to(to, memory_view_);
    leg->route = &route;
    send(route.ports.front(), std::move(leg));
  }
  /// Answer a finished command: to its client if it was submitted here, else to the node it came from.
  void answer(Ref<HostCommand> cmd) {
    if (cmd->client) {
      cmd->t_done = now();
      cmd->client->on_complete(*cmd);
      return;
    }
    cmd->is_response = true;
    cmd->bytes = 0;
    const Route& back = route_to(cmd->initiator, memory_view_);
    cmd->route = &back;
    send(back.ports.front(), std::move(cmd));
  }

 private:
  Tick overhead_;
  Stat& answers_;
  ViewId memory_view_ = 0;
  struct Pending {
    unsigned legs = 0;      ///< answers still out
    bool answered = false;  ///< answered early (fail-fast): the rest are dropped
  };
  std::unordered_map<const HostCommand*, Pending> pending_;
};

}  // namespace kbsim::ahbm
