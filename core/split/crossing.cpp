#include "split/crossing.hpp"

#include <cstdio>

#include "plugin/registry.hpp"

namespace kbsim::core {

namespace {

std::string hex(TypeId t) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(t));
  return buf;
}

}  // namespace

void encode_message(const Registry& registry, const Message& msg, ByteWriter& w) {
  if (!registry.message_type(msg.type()))
    throw SimError("message type " + std::string(msg.type_name()) +
                   " cannot cross between processes: no plugin registers it (add_message)");
  w.put(msg.type());
  w.put(msg.bytes);
  w.put(static_cast<std::uint8_t>(msg.request_channel));
  // The route: its links (0: none), the nodes it passes, the out-port at each, and its cost.
  const Route* route = msg.route;
  w.put(static_cast<std::uint32_t>(route ? route->ports.size() : 0));
  if (route && !route->ports.empty()) {
    for (NodeIndex n : route->nodes) w.put(n);
    for (PortIndex p : route->ports) w.put(p);
    w.put(route->cost);
  }
  msg.save(w);
}

const Route* RouteStore::intern(Route r) {
  for (NodeIndex n : r.nodes)
    if (n >= nodes_)
      throw SimError("a message from another process follows a route through node " + std::to_string(n) +
                     ", which this graph does not have");
  auto& kept = kept_[{r.nodes, r.ports}];
  if (!kept) kept = std::make_unique<Route>(std::move(r));
  return kept.get();
}

namespace {

/// The base's fields and the type's own, after the type id.
void read_fields(ByteReader& r, Message& msg, RouteStore* routes) {
  msg.bytes = r.get<std::uint64_t>();
  msg.request_channel = r.get<std::uint8_t>() != 0;
  msg.route = nullptr;
  if (const auto links = r.get<std::uint32_t>(); links > 0) {
    if (!routes) throw SimError("a message from another process follows a route, which this side cannot take");
    if (links > r.remaining() / (sizeof(NodeIndex) + sizeof(PortIndex)))
      throw SimError("a message from another process has a route of " + std::to_string(links) +
                     " links, longer than what came");
    Route route;
    route.nodes.resize(links + 1);
    route.ports.resize(links);
    for (NodeIndex& n : route.nodes) n = r.get<NodeIndex>();
    for (PortIndex& p : route.ports) p = r.get<PortIndex>();
    route.cost = r.get<Tick>();
    msg.route = routes->intern(std::move(route));
  }
  msg.load(r);
}

}  // namespace

void decode_message_into(ByteReader& r, Message& msg, RouteStore* routes) {
  const auto type = r.get<TypeId>();
  if (type != msg.type())
    throw SimError("an answer from another process is a message of type id " + hex(type) + ", not the " +
                   std::string(msg.type_name()) + " that left");
  read_fields(r, msg, routes);
}

Ref<Message> decode_message(const Registry& registry, ByteReader& r, RouteStore* routes) {
  const auto type = r.get<TypeId>();
  const MessageType* t = registry.message_type(type);
  if (!t)
    throw SimError("a message from another process has type id " + hex(type) + ", which no plugin here registers");
  Ref<Message> msg = t->make();
  read_fields(r, *msg, routes);
  return msg;
}

}  // namespace kbsim::core
