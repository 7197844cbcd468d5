// IPCQ: queues between PEs (docs/model.md, "IPCQ"). Each PE's PE_IPCQ holds a
// queue pair per installed direction: an rx ring of n_slots x slot_size that
// its peers write into, and the send side's head with a cached copy of the
// peer's tail. A send is one DMA write on the PE_DMA's communication channel,
// data and metadata together, addressed to a slot of the peer's rx ring; the
// receiving PE_DMA writes the slot (paying the slot memory tier) and hands the
// arrival to its PE_IPCQ. A consuming recv reads the slot, advances the tail
// and returns a 16-byte credit to the sender on the fast path.
//
// Addresses live in a synthetic sideband namespace above the 51-bit physical
// space: base(s, c, p) = 1<<60 | s<<40 | c<<32 | p<<24, and a direction's rx
// ring starts at base + index(direction) x n_slots x slot_size.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kbsim/ahbm/host_command.hpp"
#include "kbsim/ahbm/phys_addr.hpp"
#include "kbsim/component.hpp"
#include "kbsim/message.hpp"
#include "kbsim/pe/data_op.hpp"

namespace kbsim::pe {

// --- directions ---

/// The directions every PE_IPCQ knows, in address order: the cube mesh (pe0 to
/// pe0 of the neighbour cube), across SIPs (global_*), inside a cube (intra_*),
/// and the two ends of a ring (next / prev). An algorithm may use other names:
/// they follow these in the PE's table, sorted by name.
inline constexpr std::array<std::string_view, 14> kDirections = {
    "N",        "S",       "E",       "W",       "global_N", "global_S", "global_E",
    "global_W", "intra_N", "intra_S", "intra_E", "intra_W",  "next",     "prev"};

/// The direction facing `dir` (N <-> S, global_E <-> global_W, next <-> prev, ...); empty if it has none.
inline std::string_view opposite_direction(std::string_view dir) noexcept {
  static constexpr std::array<std::string_view, 14> kOpposite = {
      "S",        "N",       "W",       "E",       "global_S", "global_N", "global_W",
      "global_E", "intra_S", "intra_N", "intra_W", "intra_E",  "prev",     "next"};
  for (std::size_t i = 0; i < kDirections.size(); ++i)
    if (kDirections[i] == dir) return kOpposite[i];
  return {};
}

// --- addresses ---

inline constexpr std::uint64_t kIpcqBase = std::uint64_t{1} << 60;
inline constexpr std::uint64_t kIpcqPeSpan = std::uint64_t{1} << 24;  ///< address room of one PE's rx rings
inline std::uint64_t ipcq_pe_base(const ahbm::PeRef& p) {
  return kIpcqBase | std::uint64_t{p.sip} << 40 | std::uint64_t{p.cube} << 32 | std::uint64_t{p.pe} << 24;
}

// --- configuration (ccl.yaml `defaults`, merged with the algorithm's entry) ---

enum class BufferKind : std::uint8_t { kTcm, kSram, kHbm };
enum class Backpressure : std::uint8_t { kSleep, kPoll };

inline std::string_view buffer_kind_name(BufferKind k) noexcept {
  return k == BufferKind::kTcm ? "tcm" : k == BufferKind::kSram ? "sram" : "hbm";
}
/// The memory a buffer kind's slots are in, as the data pass keys their values.
inline tl::Space buffer_space(BufferKind k) noexcept {
  return k == BufferKind::kTcm ? tl::Space::kTcm : k == BufferKind::kSram ? tl::Space::kSram : tl::Space::kHbm;
}

struct IpcqConfig {
  BufferKind buffer_kind = BufferKind::kTcm;
  Backpressure backpressure = Backpressure::kSleep;
  std::uint32_t n_slots = 4;
  std::uint64_t slot_size = 4096;
  std::uint32_t credit_bytes = 16;
  std::uint64_t bytes_per_direction() const noexcept { return n_slots * slot_size; }
};

/// One installed queue pair of a PE, seen from that PE.
struct IpcqQueue {
  std::string dir;                 ///< this PE's direction name
  std::string peer_dir;            ///< the peer's direction that points back (the reverse-direction rule)
  ahbm::PeRef peer;                ///< the PE at the other end
  std::uint64_t rx_base = 0;       ///< this PE's rx ring for `dir`
  std::uint64_t peer_rx_base = 0;  ///< the peer's rx ring for `peer_dir`: where this PE's sends land
};

/// What the PE_IPCQ component offers the installer and its PE's DMA and CPU.
/// Obtain it with dynamic_cast from the component (`as_ipcq`).
class IpcqPort {
 public:
  /// Replace this PE's queue table. Called before the kernels run (the
  /// reference's special-function-register install: no simulated time).
  virtual void install(const IpcqConfig& cfg, std::vector<IpcqQueue> queues) = 0;
  /// The installed queue of direction `dir`, or nullptr.
  virtual const IpcqQueue* queue(std::string_view dir) const = 0;
  /// Time the receiving DMA spends writing `nbytes` into a slot of this PE's rx rings.
  virtual Tick slot_write(std::uint64_t nbytes) const = 0;

 protected:
  ~IpcqPort() = default;
};
inline IpcqPort* as_ipcq(Component& c) noexcept { return dynamic_cast<IpcqPort*>(&c); }

// --- messages ---

/// A kernel's IPCQ call, PE_CPU -> PE_IPCQ; the same object comes back done.
class IpcqCall : public Message {
 public:
  static constexpr std::string_view kName = "pe.IpcqCall";
  static constexpr TypeId kType = type_id(kName);
  IpcqCall() noexcept : Message(kType) {}

  enum class Kind : std::uint8_t { kSend, kRecv, kRecvNoConsume };
  Kind kind = Kind::kSend;
  std::uint64_t id = 0;
  std::string dir;
  std::uint64_t nbytes = 0;
  NodeIndex reply_to = 0;
  /// kSend: the source as the data pass finds it, captured at issue (a snapshot when the bytes are known).
  OpTensor source;

  // --- results ---
  bool done = false, ok = true;
  std::string error;
  std::uint64_t slot_addr = 0;             ///< kRecv: the rx slot the message sits in
  tl::Space slot_space = tl::Space::kTcm;  ///< kRecv: the slot memory (the buffer kind's), for the data pass
  BytesPtr value;                          ///< kRecv: its bytes when the timing pass knows them
  Tick t_read = 0;                         ///< kRecv: when the slot was read (the data pass reads it as of then)
  std::uint64_t message_bytes = 0;
};

/// A send on the fabric: PE_IPCQ -> its PE_DMA -> ... -> the peer's PE_DMA -> the peer's PE_IPCQ.
/// A data operation: the receiving DMA's slot write is the `ipcq_copy` record.
class IpcqPacket : public Message {
 public:
  static constexpr std::string_view kName = "pe.IpcqPacket";
  static constexpr TypeId kType = type_id(kName);
  IpcqPacket() noexcept : Message(kType, true) {}

  NodeIndex src_dma = 0, dst_dma = 0;  ///< the two PE_DMA engines
  ViewId view = 0;                     ///< the routing view between them ("local" inside a cube, else "data")
  std::uint64_t dst_addr = 0;          ///< the rx slot it is written to
  std::uint64_t sender_seq = 0;        ///< the sender's head before this send
  std::string src_dir;                 ///< diagnostic only
  std::uint64_t nbytes = 0;
  OpTensor source;                         ///< the sent value, as captured when the send was issued
  tl::Space slot_space = tl::Space::kTcm;  ///< the rx slot's memory (the buffer kind's): where the data pass keeps it

  void save(ByteWriter& w) const override {
    w.put(src_dma);
    w.put(dst_dma);
    w.put(view);
    w.put(dst_addr);
    w.put(sender_seq);
    w.put_string(src_dir);
    w.put(nbytes);
    source.save(w);
    w.put(slot_space);
  }
  void load(ByteReader& r) override {
    src_dma = r.get<NodeIndex>();
    dst_dma = r.get<NodeIndex>();
    view = r.get<ViewId>();
    dst_addr = r.get<std::uint64_t>();
    sender_seq = r.get<std::uint64_t>();
    src_dir = r.get_string();
    nbytes = r.get<std::uint64_t>();
    source.load(r);
    slot_space = r.get<tl::Space>();
  }

  bool describe_op(OpRecord& r) const override {
    if (r.component != dst_dma) return false;  // only the receiving DMA's slot write is an operation
    auto op = std::make_shared<DataOp>();
    op->kind = DataOp::Kind::kCopy;
    op->in = {source};
    op->out = {slot_space, dst_addr, source.shape, source.dtype, kNever, nullptr, false};
    r.kind = OpKind::kMemory;
    r.name = "ipcq_copy";
    r.param("src_space", tl::space_name(source.space));
    r.param("src_addr", source.addr);
    r.param("dst_space", "ipcq");
    r.param("dst_addr", dst_addr);
    r.param("shape", source.shape.str());
    r.param("dtype", dtype_name(source.dtype));
    r.param("nbytes", nbytes);
    r.param("snapshot", source.value != nullptr);
    r.data = std::move(op);
    return true;
  }
};

/// A credit on the fast path: the consumer's tail, back to the sender (0 bytes: latency only).
class IpcqCredit : public Message {
 public:
  static constexpr std::string_view kName = "pe.IpcqCredit";
  static constexpr TypeId kType = type_id(kName);
  IpcqCredit() noexcept : Message(kType) {}

  NodeIndex src_dma = 0, dst_dma = 0;
  ViewId view = 0;
  std::uint64_t consumer_seq = 0;  ///< messages consumed so far on this queue
  std::uint64_t dst_rx_base = 0;   ///< the consumer's rx ring: the sender matches its queue by it

  void save(ByteWriter& w) const override {
    w.put(src_dma);
    w.put(dst_dma);
    w.put(view);
    w.put(consumer_seq);
    w.put(dst_rx_base);
  }
  void load(ByteReader& r) override {
    src_dma = r.get<NodeIndex>();
    dst_dma = r.get<NodeIndex>();
    view = r.get<ViewId>();
    consumer_seq = r.get<std::uint64_t>();
    dst_rx_base = r.get<std::uint64_t>();
  }
};

}  // namespace kbsim::pe
