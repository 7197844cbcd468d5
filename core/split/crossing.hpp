// A message as bytes, for a split run's processes to exchange (docs/scale-out.md):
// its type, the base's fields (the route it follows included), then its own
// (Message::save). The receiving side makes one of the same type from the pool
// of the library that registered it (add_message) and reads the rest back. The
// sender is stamped by the receiver.
#pragma once

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "kbsim/bytes.hpp"
#include "kbsim/component.hpp"
#include "kbsim/message.hpp"

namespace kbsim::core {

class Registry;

/// The routes of the messages a process received: one object per path, kept while the system lives (a message
/// points to its route, and every process builds the same graph, so a path is its nodes and ports).
class RouteStore {
 public:
  explicit RouteStore(std::size_t nodes) : nodes_(nodes) {}
  /// The kept route of `r`'s path (made from `r` the first time). SimError if it names a node the graph lacks.
  const Route* intern(Route r);

 private:
  std::size_t nodes_;
  std::map<std::pair<std::vector<NodeIndex>, std::vector<PortIndex>>, std::unique_ptr<Route>> kept_;
};

/// Append the bytes of `msg` to `w`. SimError naming the type when it cannot cross.
void encode_message(const Registry& registry, const Message& msg, ByteWriter& w);
/// The message `r` holds next (encode_message's bytes); a route it follows comes from `routes` (none given: a
/// routed message is an error). SimError naming what is wrong.
Ref<Message> decode_message(const Registry& registry, ByteReader& r, RouteStore* routes = nullptr);
/// The same, read into `msg` (an answer to the request `msg` that left): its type must be `msg`'s.
void decode_message_into(ByteReader& r, Message& msg, RouteStore* routes);

}  // namespace kbsim::core
