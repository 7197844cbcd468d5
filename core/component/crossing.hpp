// A message as bytes, for a split run's processes to exchange (docs/scale-out.md):
// its type, the base's fields, then its own (Message::save). The receiving side
// makes one of the same type from the pool of the library that registered it
// (add_message) and reads the rest back. The sender is stamped by the receiver.
#pragma once

#include "kbsim/bytes.hpp"
#include "kbsim/message.hpp"

namespace kbsim::core {

class Registry;

/// Append the bytes of `msg` to `w`. SimError naming the type when it cannot cross.
void encode_message(const Registry& registry, const Message& msg, ByteWriter& w);
/// The message `r` holds next (encode_message's bytes). SimError naming what is wrong.
Ref<Message> decode_message(const Registry& registry, ByteReader& r);

}  // namespace kbsim::core
