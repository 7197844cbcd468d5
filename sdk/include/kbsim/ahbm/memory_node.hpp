// Base for AHBM components that issue or serve memory requests: checks an
// access against the memory map, sends a request towards its target, and
// turns a served request into its response.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>

#include "kbsim/ahbm/memory.hpp"
#include "kbsim/ahbm/memory_map.hpp"
#include "kbsim/ahbm/names.hpp"
#include "kbsim/component.hpp"

namespace kbsim::ahbm {

/// Whether `a` is memory of `kind` (AUTO: any address; TCM: a PE's PE_LOCAL TCM sub-unit).
inline bool is_mem_kind(const Decoded& a, MemKind kind) {
  switch (kind) {
    case MemKind::kHbm: return a.kind == AddrKind::kHbm;
    case MemKind::kTcm: return a.kind == AddrKind::kPeLocal && a.sub == static_cast<unsigned>(PeSub::kTcm);
    case MemKind::kAuto: break;
  }
  return true;
}

/// What memory `a` is, in the words of MEM_KIND_MISMATCH errors.
inline std::string memory_name(const Decoded& a) {
  switch (a.kind) {
    case AddrKind::kHbm: return "HBM";
    case AddrKind::kPeLocal:
      return a.sub == static_cast<unsigned>(PeSub::kTcm) ? "TCM" : "PE_LOCAL sub-unit " + std::to_string(a.sub);
    case AddrKind::kMcpuLocal: return "MCPU_LOCAL";
    case AddrKind::kCubeSram: return "CUBE_SRAM";
    case AddrKind::kIocpu: return "IOCPU";
    case AddrKind::kUal: break;
  }
  return "UAL";
}

class MemoryNode : public Component {
 public:
  explicit MemoryNode(const ComponentContext& ctx) : Component(ctx), where_(names::locate(ctx.id)) {}

 protected:
  /// The system's memory map (from the topology's attributes; read once).
  const MemoryMap& memory_map() {
    if (!map_) map_ = MemoryMap::from(system_attrs());
    return *map_;
  }
  const names::Location& where() const noexcept { return where_; }

  /// The component's overhead parameter `declared` (its own handle, "overhead_ns" by convention) in ticks, checked
  /// to be >= 0. With `transit`, routing also charges it for passing through this node.
  Tick overhead_param(const FloatParam& declared, bool transit) {
    double ns = params().get(declared);
    params().check(ns >= 0, declared, "must be >= 0");
    Tick t = ns_to_ticks(ns);
    if (transit) set_transit_cost(t);
    return t;
  }

  /// `msg` as a memory request; fails (naming this component) if it is anything else.
  Ref<MemRequest> request(const Ref<Message>& msg) {
    if (!msg->is<MemRequest>()) fail("received a message that is not a memory request");
    return Ref<MemRequest>(static_cast<MemRequest*>(msg.get()));
  }

  /// Check `r` (its access, and a write's declared dst_mem_kind) and fill in its
  /// target, routing view and unit offset. The view is "local" when the target
  /// is in this node's cube, else `elsewhere`. On failure the completion says
  /// why, false is returned and nothing is sent.
  bool prepare(MemRequest& r, std::string_view elsewhere) {
    AccessCheck c = check_access(memory_map(), r.pa, r.nbytes, false);
    if (c.ok && r.op == MemOp::kWrite && !is_mem_kind(c.target.addr, r.dst_mem_kind)) {
      c.ok = false;
      c.error_code = "MEM_KIND_MISMATCH";
      c.error = "address " + hex(r.pa) + ": the write's dst_mem_kind is " + mem_kind_name(r.dst_mem_kind) +
                " but the address is " + memory_name(c.target.addr);
    }
    if (c.ok && (r.target = target_node(c.target)) == kNoNode) {
      c.ok = false;
      c.error_code = "NO_TARGET";
      c.error = "address " + hex(r.pa) + ": node " + target_name(c.target) + " is not in this topology";
    }
    if (!c.ok) {
      r.completion = {false, c.error_code, c.error};
      return false;
    }
    const Decoded& a = c.target.addr;
    bool same_cube = a.kind != AddrKind::kIocpu && where_.sip == static_cast<int>(a.sip) &&
                     where_.cube == static_cast<int>(c.target.cube);
    r.initiator = index();
    r.view = same_cube ? view_named(local_, "local") : view_named(elsewhere_, elsewhere);
    r.unit_offset = a.offset;
    r.is_response = false;
    return true;
  }

  /// Send a prepared request towards its target, handing it to the link `delay` from now.
  void launch(Ref<MemRequest> r, Tick delay) {
    const Route& route = route_to(r->target, r->view);
    r->route = &route;
    r->bytes = r->op == MemOp::kWrite ? r->nbytes : 0;
    PortIndex out = route.ports.front();
    send(out, std::move(r), delay);
  }

  /// Turn a served request into its response (read: the data; write: a 0-byte
  /// acknowledgement) and send it back to the initiator `delay` from now.
  void reply(Ref<MemRequest> r, Tick delay) {
    r->is_response = true;
    r->bytes = r->op == MemOp::kRead ? r->nbytes : 0;
    const Route& route = route_to(r->initiator, r->view);
    r->route = &route;
    PortIndex out = route.ports.front();
    send(out, std::move(r), delay);
  }

  /// A new request for the same access, on behalf of `parent` (a relay leg).
  static Ref<MemRequest> split(MemRequest& parent) {
    Ref<MemRequest> sub = make_message<MemRequest>();
    sub->op = parent.op;
    sub->pa = parent.pa;
    sub->nbytes = parent.nbytes;
    sub->request_channel = parent.request_channel;
    sub->pattern = parent.pattern;
    sub->target_device = parent.target_device;
    sub->dst_mem_kind = parent.dst_mem_kind;
    sub->correlation_id = parent.correlation_id;
    sub->request_id = parent.request_id;
    sub->tag = parent.tag;
    sub->t_issue = parent.t_issue;
    sub->parent = Ref<MemRequest>(&parent);
    return sub;
  }

  /// Hand a finished request to its client.
  void complete(MemRequest& r) {
    r.t_done = now();
    if (r.client) r.client->on_complete(r);
  }

 private:
  /// A view by name, kept with its name: prepare runs per request, and asks for one or two views.
  struct NamedView {
    std::string name;
    ViewId view = 0;
    bool found = false;
  };
  ViewId view_named(NamedView& kept, std::string_view name) {
    if (!kept.found || kept.name != name) kept = {std::string(name), find_view(name), true};
    return kept.view;
  }
  /// The node serving a checked target, found by its id once and then by its fields (kNoNode: none).
  NodeIndex target_node(const Target& t) {
    const Decoded& a = t.addr;
    const std::uint64_t key = std::uint64_t{static_cast<unsigned>(a.kind)} << 56 | std::uint64_t{a.sip} << 32 |
                              std::uint64_t{a.die} << 16 | t.pe;
    auto [it, fresh] = targets_.try_emplace(key, kNoNode);
    if (fresh) it->second = lookup_node(target_name(t));
    return it->second;
  }
  NamedView local_, elsewhere_;
  std::unordered_map<std::uint64_t, NodeIndex> targets_;
  names::Location where_;
  std::optional<MemoryMap> map_;
};

}  // namespace kbsim::ahbm
