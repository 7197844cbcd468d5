#include "component/crossing.hpp"

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
  if (msg.route)
    throw SimError("a " + std::string(msg.type_name()) +
                   " that follows a route cannot cross between processes yet (docs/scale-out.md)");
  w.put(msg.type());
  w.put(msg.bytes);
  w.put(static_cast<std::uint8_t>(msg.request_channel));
  msg.save(w);
}

Ref<Message> decode_message(const Registry& registry, ByteReader& r) {
  const auto type = r.get<TypeId>();
  const MessageType* t = registry.message_type(type);
  if (!t)
    throw SimError("a message from another process has type id " + hex(type) + ", which no plugin here registers");
  Ref<Message> msg = t->make();
  msg->bytes = r.get<std::uint64_t>();
  msg->request_channel = r.get<std::uint8_t>() != 0;
  msg->load(r);
  return msg;
}

}  // namespace kbsim::core
