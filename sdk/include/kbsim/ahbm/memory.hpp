// Memory transactions of the AHBM fabric (host memory writes and reads, and PE
// DMA; docs/model.md, "Memory transactions") and the interface through which a
// bench or another component asks an initiator (pcie_ep, pe_dma) to issue one.
//
// One MemRequest object travels the whole round trip: it crosses the fabric
// as the request (a write carries its payload, a read is a 0-byte command),
// and the serving node turns it into the response in place (a read returns
// its data, a write returns a 0-byte acknowledgement).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kbsim/component.hpp"
#include "kbsim/message.hpp"

namespace kbsim::ahbm {

enum class MemOp : std::uint8_t { kRead, kWrite };

/// Fill pattern of a host memory write (no bulk data is carried).
struct Pattern {
  enum class Kind : std::uint8_t { kZero, kFillU8, kFillU16, kFillU32, kFillF16, kFillF32 };
  Kind kind = Kind::kZero;
  double value = 0.0;
};

/// Completion of a request: ok, or an error code and a sentence.
struct Completion {
  bool ok = true;
  std::string error_code;
  std::string error_message;

  void save(ByteWriter& w) const {
    w.put(ok);
    w.put_string(error_code);
    w.put_string(error_message);
  }
  void load(ByteReader& r) {
    ok = r.get<bool>();
    error_code = r.get_string();
    error_message = r.get_string();
  }
};

/// The SIP a host request is for (the envelope's `target_device`, docs/model.md "Host commands and the launch
/// barrier"): a SIP index, printed "sip:N" as the reference writes it. kAnyDevice: not stated (a component-level
/// initiator such as a test or a bench driving PCIE_EP directly); the entry component then does not check it.
inline constexpr unsigned kAnyDevice = ~0u;
inline std::string device_name(unsigned sip) { return "sip:" + std::to_string(sip); }

/// The entry component's refusal of `what` (e.g. "a memory write") stated for `target_device`: none when it is not
/// stated, when the component `who` does not know its SIP (`own_sip` < 0), or when it is that SIP; otherwise
/// WRONG_DEVICE naming both devices. An entry component never forwards a request for another device.
inline std::optional<Completion> wrong_device(unsigned target_device, int own_sip, std::string_view who,
                                              std::string_view what) {
  if (target_device == kAnyDevice || own_sip < 0 || target_device == static_cast<unsigned>(own_sip)) return {};
  return Completion{false, "WRONG_DEVICE",
                    std::string(what) + " for " + device_name(target_device) + " reached " + std::string(who) +
                        ", which is on " + device_name(static_cast<unsigned>(own_sip))};
}

/// The memory a write declares it is for (the envelope's `dst_mem_kind`): HBM, a PE's TCM (its PE_LOCAL TCM
/// sub-unit), or AUTO (any address). The initiator refuses a write to another kind (MEM_KIND_MISMATCH).
enum class MemKind : std::uint8_t { kAuto, kHbm, kTcm };
inline const char* mem_kind_name(MemKind k) {
  switch (k) {
    case MemKind::kHbm: return "HBM";
    case MemKind::kTcm: return "TCM";
    case MemKind::kAuto: break;
  }
  return "AUTO";
}

class MemClient;

class MemRequest : public Message {
 public:
  static constexpr std::string_view kName = "ahbm.MemRequest";
  static constexpr TypeId kType = type_id(kName);
  MemRequest() noexcept : Message(kType) {}

  // --- set by whoever asks for the access ---
  MemOp op = MemOp::kWrite;
  std::uint64_t pa = 0;      ///< 51-bit physical address
  std::uint64_t nbytes = 0;  ///< bytes to move
  Pattern pattern;           ///< writes only
  std::uint64_t correlation_id = 0;
  std::uint64_t request_id = 0;
  std::uint64_t tag = 0;                  ///< free for the client
  unsigned target_device = kAnyDevice;    ///< the SIP it is for; PCIE_EP refuses another (WRONG_DEVICE)
  MemKind dst_mem_kind = MemKind::kAuto;  ///< writes only: the memory the PA must be (MEM_KIND_MISMATCH)

  /// Host requests only: go through io_cpu and the cube's M_CPU DMA instead of
  /// the direct memory path (the reference's fallback; docs/model.md,
  /// "Memory transactions").
  bool via_mcpu = false;

  // --- filled in along the way ---
  std::uint64_t unit_offset = 0;  ///< byte offset inside the serving unit (e.g. the HBM offset)
  Ref<MemRequest> parent;         ///< the request this one was split from (io_cpu / m_cpu legs)
  NodeIndex initiator = 0;        ///< node that put it on the fabric (the response goes back there)
  NodeIndex target = 0;           ///< node that serves it
  ViewId view = 0;                ///< routing view of both legs
  bool is_response = false;
  Tick t_issue = 0;     ///< when the initiator accepted it
  Tick t_start = 0;     ///< when it left the initiator (after queueing for a channel)
  Tick t_serviced = 0;  ///< write: last burst committed; read: first data left the target
  Tick t_done = 0;      ///< completion at the initiator
  Completion completion;
  MemClient* client = nullptr;

  // Between the processes of a split run (docs/scale-out.md): a request and its response end where the request was
  // made, so it comes back there as the same object (its client and parent stay there); its other fields go both
  // ways.
  bool returns() const noexcept override { return true; }
  void save(ByteWriter& w) const override {
    w.put(op);
    w.put(pa);
    w.put(nbytes);
    w.put(pattern.kind);
    w.put(pattern.value);
    w.put(correlation_id);
    w.put(request_id);
    w.put(tag);
    w.put(target_device);
    w.put(dst_mem_kind);
    w.put(via_mcpu);
    w.put(unit_offset);
    w.put(initiator);
    w.put(target);
    w.put(view);
    w.put(is_response);
    w.put(t_issue);
    w.put(t_start);
    w.put(t_serviced);
    w.put(t_done);
    completion.save(w);
  }
  void load(ByteReader& r) override {
    op = r.get<MemOp>();
    pa = r.get<std::uint64_t>();
    nbytes = r.get<std::uint64_t>();
    pattern.kind = r.get<Pattern::Kind>();
    pattern.value = r.get<double>();
    correlation_id = r.get<std::uint64_t>();
    request_id = r.get<std::uint64_t>();
    tag = r.get<std::uint64_t>();
    target_device = r.get<unsigned>();
    dst_mem_kind = r.get<MemKind>();
    via_mcpu = r.get<bool>();
    unit_offset = r.get<std::uint64_t>();
    initiator = r.get<NodeIndex>();
    target = r.get<NodeIndex>();
    view = r.get<ViewId>();
    is_response = r.get<bool>();
    t_issue = r.get<Tick>();
    t_start = r.get<Tick>();
    t_serviced = r.get<Tick>();
    t_done = r.get<Tick>();
    completion.load(r);
  }
};

/// Receives completions. Called at the simulated time the initiator completes.
class MemClient {
 public:
  virtual void on_complete(MemRequest& req) = 0;

 protected:
  ~MemClient() = default;
};

/// Implemented by components that put memory requests on the fabric.
/// A bad request (see check_access) completes with ok=false; it never throws.
class MemInitiator {
 public:
  virtual void submit(Ref<MemRequest> req, MemClient* client) = 0;

 protected:
  ~MemInitiator() = default;
};

/// The initiator interface of a component, or nullptr.
inline MemInitiator* as_initiator(Component& c) { return dynamic_cast<MemInitiator*>(&c); }

}  // namespace kbsim::ahbm
