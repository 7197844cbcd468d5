// A link: one directed edge. What it is (ends, latency, bandwidth, flit size)
// is a Link, fixed when the graph is elaborated and shared by every system of
// that graph; what happens on it in one system (occupancy, statistics) is that
// system's Wire (what a message without bytes needs) and Load (occupancy). A message crosses it as ceil(bytes /
// flit_bytes) flits; each flit waits for the link to be free and occupies it for its own bytes / bandwidth. Control
// messages (0 bytes) pay only the propagation latency.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kbsim/component.hpp"
#include "kbsim/time.hpp"

namespace kbsim::core {

struct Link {
  NodeIndex src = 0;
  NodeIndex dst = 0;
  PortIndex dst_port = 0;  ///< in-port index at dst
  bool dst_flit_aware = false;
  bool dst_trains = false;    ///< (flit-aware) the receiver takes flit trains as a whole (ComponentInfo::trains)
  std::uint16_t accepts = 0;  ///< 0: any message; else 1 + the receiving port's list of accepted types
  Tick latency = 0;
  double bandwidth_gbs = 0.0;  ///< 0 = unlimited
  Tick ser_full = 0;           ///< serialization of one full flit
  std::uint32_t flit_bytes = 256;

  Tick ser(std::uint32_t nbytes) const noexcept {
    return nbytes == flit_bytes ? ser_full : serialization_ticks(nbytes, bandwidth_gbs);
  }

  /// The flit shape of a message of `nbytes`.
  struct Shape {
    std::uint32_t count;
    std::uint32_t last_bytes;
  };
  Shape shape(std::uint64_t nbytes) const noexcept {
    if (nbytes == 0) return {1, 0};
    auto count = static_cast<std::uint32_t>((nbytes + flit_bytes - 1) / flit_bytes);
    return {count, static_cast<std::uint32_t>(nbytes - std::uint64_t{count - 1} * flit_bytes)};
  }
  /// How long the first flit of a message of this shape takes to leave.
  Tick first_ser(Shape s) const noexcept { return s.count > 1 ? ser_full : ser(s.last_bytes); }
  /// How long a whole message of this shape takes to leave: its flits back to back.
  Tick whole_ser(Shape s) const noexcept {
    return s.last_bytes == 0 ? 0 : Tick{s.count - 1} * ser_full + ser(s.last_bytes);
  }
};
static_assert(sizeof(Link) == 48);  // (the views a link is excluded from are the route search's: Elaboration::steps)

/// A link in one system, as a message with no bytes needs it: half a cache line per out-port, kept in port order
/// like the links (the simulation's wires[port_begin[node] + port] is the wire of links[port_begin[node] + port]), so
/// the sends of a mesh's control messages touch nothing else.
struct alignas(32) Wire {
  Component* dst = nullptr;  ///< the receiving component: the event's handler
  Tick latency = 0;
  std::uint64_t messages = 0;  ///< whole messages sent
  PortIndex dst_port : 31 = 0;
  std::uint32_t plain : 1 = 0;  ///< the receiver takes whole messages of any type: a 0-byte one needs no more
};
static_assert(sizeof(Wire) == 32);

/// A link's occupancy and byte statistics in one system (parallel to the wires), which messages with bytes or
/// flits update.
struct Load {
  Tick busy_until = 0;
  std::uint64_t bytes = 0;
  std::uint64_t flits = 0;
  Tick busy = 0;  ///< time spent serializing

  bool operator==(const Load&) const = default;

  /// Reserve the link `l` for `s.count` back-to-back flits handed over at `at`.
  /// Returns the time the first flit starts on the wire. Control messages
  /// (0 bytes) neither wait nor occupy.
  Tick reserve(const Link& l, Tick at, Link::Shape s) noexcept {
    if (s.last_bytes == 0) return at;
    Tick start = std::max(at, busy_until);
    Tick total = Tick{s.count - 1} * l.ser_full + l.ser(s.last_bytes);
    busy_until = start + total;
    busy += total;
    flits += s.count;
    bytes += std::uint64_t{s.count - 1} * l.flit_bytes + s.last_bytes;
    return start;
  }
};

/// What happened on a link in one system.
struct Traffic {
  std::uint64_t messages = 0;
  std::uint64_t flits = 0;
  std::uint64_t bytes = 0;
  Tick busy = 0;
};

}  // namespace kbsim::core
