// 51-bit AHBM physical addresses (docs/model.md, "Physical addresses"):
// positional encode and decode, no state and no topology lookup. Capacity
// checks that need the configured system live in memory_map.hpp.
//
//   [50:47] sip_id   [46:42] die_id   [41:0] local_offset
//   die 0..15  AHBM cube:  [41:38] MBZ  [37] space (1 = HBM, 0 = resource)
//       HBM:       [36:0] hbm_offset (128 GiB decode window)
//       resource:  [36:34] kind (0 PE_LOCAL, 1 MCPU_LOCAL, 2 CUBE_SRAM)  [33:0] kind_local
//         PE_LOCAL:   [33] MBZ  [32:29] pe_id  [28:25] sub_unit  [24:0] sub_offset
//         MCPU_LOCAL: [33:30] MBZ  [29:25] sub_unit  [24:0] sub_offset
//         CUBE_SRAM:  [33:25] MBZ  [24:0] sram_offset
//   die 16..20 IO chiplet: [41:40] MBZ  [39:0] chiplet_offset
//         < 2 GiB: IOCPU region [30:27] sub_unit [26:0] sub_offset; above: UAL
#pragma once

#include <cstdint>
#include <string>

#include "kbsim/errors.hpp"

namespace kbsim::ahbm {

inline constexpr unsigned kAddrBits = 51;
inline constexpr unsigned kMaxSips = 16;
inline constexpr unsigned kCubeDies = 16;    ///< die ids 0..15
inline constexpr unsigned kFirstIoDie = 16;  ///< die ids 16..20
inline constexpr unsigned kIoDies = 5;
inline constexpr std::uint64_t kHbmWindow = std::uint64_t{1} << 37;    ///< 128 GiB
inline constexpr std::uint64_t kSramWindow = std::uint64_t{1} << 25;   ///< 32 MiB
inline constexpr std::uint64_t kIocpuRegion = std::uint64_t{1} << 31;  ///< 2 GiB
inline constexpr std::uint64_t kChipletWindow = std::uint64_t{1} << 40;

enum class AddrKind : std::uint8_t { kHbm, kPeLocal, kMcpuLocal, kCubeSram, kIocpu, kUal };

/// PE_LOCAL sub-units (32 MiB slots) and their architectural budgets.
enum class PeSub : std::uint8_t { kCpuDtcm = 0, kMathDtcm, kIpcq, kCpuSfr, kMathSfr, kDmaSfr, kTcm };
enum class McpuSub : std::uint8_t { kItcm = 0, kDtcm, kIpcq, kSfr, kDmaSfr, kSram };
enum class IocpuSub : std::uint8_t { kItcm = 0, kDtcm, kIpcq, kSfr, kDmaSfr, kSram };

inline constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;
/// Budget of each sub-unit in bytes; 0 = reserved (any access is invalid).
inline std::uint64_t pe_sub_budget(unsigned sub) {
  constexpr std::uint64_t b[] = {8 * KiB, 8 * KiB, 256 * KiB, 16 * KiB, 16 * KiB, 192 * KiB, 2 * MiB};
  return sub < 7 ? b[sub] : 0;
}
inline std::uint64_t mcpu_sub_budget(unsigned sub) {
  constexpr std::uint64_t b[] = {512 * KiB, 512 * KiB, 256 * KiB, 8 * KiB, 16 * KiB, 10 * MiB};
  return sub < 6 ? b[sub] : 0;
}
inline std::uint64_t iocpu_sub_budget(unsigned sub) {
  constexpr std::uint64_t b[] = {512 * KiB, 512 * KiB, 2 * MiB, 8 * KiB, 16 * KiB, 64 * MiB};
  return sub < 6 ? b[sub] : 0;
}

/// A decoded address. `offset` is the byte offset inside the addressed unit
/// (HBM offset, sub-unit offset, SRAM offset, chiplet offset); `budget` is that
/// unit's architectural size, so an access of n bytes is valid iff offset + n <= budget.
struct Decoded {
  AddrKind kind = AddrKind::kHbm;
  unsigned sip = 0;
  unsigned die = 0;  ///< cube index for cube dies; 16..20 for IO chiplets
  unsigned pe = 0;   ///< PE_LOCAL only
  unsigned sub = 0;  ///< sub-unit for PE_LOCAL / MCPU_LOCAL / IOCPU
  std::uint64_t offset = 0;
  std::uint64_t budget = 0;
};

/// decode() either gives a Decoded or an error code and a sentence.
struct DecodeResult {
  bool ok = false;
  Decoded addr;
  std::string error_code;  ///< "ADDR_WIDTH", "MBZ_SET", "RESERVED_DIE", "RESERVED_KIND", "RESERVED_SUB_UNIT"
  std::string error;
};

inline std::string hex(std::uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 15]);
    v >>= 4;
  } while (v);
  return "0x" + s;
}

inline DecodeResult decode(std::uint64_t raw) {
  DecodeResult r;
  auto bad = [&](const char* code, std::string what) {
    r.error_code = code;
    r.error = "address " + hex(raw) + ": " + std::move(what);
    return r;
  };
  auto bits = [&](unsigned hi, unsigned lo) { return (raw >> lo) & ((std::uint64_t{1} << (hi - lo + 1)) - 1); };
  if (raw >> kAddrBits) return bad("ADDR_WIDTH", "wider than 51 bits");
  Decoded& d = r.addr;
  d.sip = static_cast<unsigned>(bits(50, 47));
  d.die = static_cast<unsigned>(bits(46, 42));
  if (d.die < kCubeDies) {
    if (bits(41, 38)) return bad("MBZ_SET", "must-be-zero bits [41:38] are set");
    if (bits(37, 37)) {
      d.kind = AddrKind::kHbm;
      d.offset = bits(36, 0);
      d.budget = kHbmWindow;
    } else {
      unsigned kind = static_cast<unsigned>(bits(36, 34));
      if (kind == 0) {
        if (bits(33, 33)) return bad("MBZ_SET", "PE_LOCAL must-be-zero bit 33 is set");
        d.kind = AddrKind::kPeLocal;
        d.pe = static_cast<unsigned>(bits(32, 29));
        d.sub = static_cast<unsigned>(bits(28, 25));
        d.offset = bits(24, 0);
        d.budget = pe_sub_budget(d.sub);
      } else if (kind == 1) {
        if (bits(33, 30)) return bad("MBZ_SET", "MCPU_LOCAL must-be-zero bits [33:30] are set");
        d.kind = AddrKind::kMcpuLocal;
        d.sub = static_cast<unsigned>(bits(29, 25));
        d.offset = bits(24, 0);
        d.budget = mcpu_sub_budget(d.sub);
      } else if (kind == 2) {
        if (bits(33, 25)) return bad("MBZ_SET", "CUBE_SRAM must-be-zero bits [33:25] are set");
        d.kind = AddrKind::kCubeSram;
        d.offset = bits(24, 0);
        d.budget = kSramWindow;
      } else {
        return bad("RESERVED_KIND", "resource kind " + std::to_string(kind) + " is reserved");
      }
      if (d.budget == 0) return bad("RESERVED_SUB_UNIT", "sub-unit " + std::to_string(d.sub) + " is reserved");
    }
  } else if (d.die < kFirstIoDie + kIoDies) {
    if (bits(41, 40)) return bad("MBZ_SET", "IO chiplet must-be-zero bits [41:40] are set");
    std::uint64_t off = bits(39, 0);
    if (off < kIocpuRegion) {
      d.kind = AddrKind::kIocpu;
      d.sub = static_cast<unsigned>(bits(30, 27));
      d.offset = bits(26, 0);
      d.budget = iocpu_sub_budget(d.sub);
      if (d.budget == 0) return bad("RESERVED_SUB_UNIT", "IOCPU sub-unit " + std::to_string(d.sub) + " is reserved");
    } else {
      d.kind = AddrKind::kUal;
      d.offset = off;
      d.budget = kChipletWindow;
    }
  } else {
    return bad("RESERVED_DIE", "die id " + std::to_string(d.die) + " is reserved");
  }
  r.ok = true;
  return r;
}

// ---- factories (throw kbsim::Error on a field out of range) ----

namespace detail {
inline std::uint64_t field(std::uint64_t v, unsigned width, const char* name) {
  if (v >> width) throw Error(std::string("address field ") + name + " = " + std::to_string(v) + " does not fit");
  return v;
}
inline std::uint64_t top(unsigned sip, unsigned die) {
  return (field(sip, 4, "sip_id") << 47) | (field(die, 5, "die_id") << 42);
}
inline unsigned cube_die(unsigned die) {
  if (die >= kCubeDies) throw Error("die_id " + std::to_string(die) + " is not a cube die (0..15)");
  return die;
}
}  // namespace detail

/// HBM byte `offset` of cube `die` on SIP `sip`.
inline std::uint64_t hbm_addr(unsigned sip, unsigned die, std::uint64_t offset) {
  return detail::top(sip, detail::cube_die(die)) | (std::uint64_t{1} << 37) | detail::field(offset, 37, "hbm_offset");
}
/// HBM `offset` inside PE `pe`'s slice of `slice_bytes`.
inline std::uint64_t pe_hbm_addr(unsigned sip, unsigned die, unsigned pe, std::uint64_t offset,
                                 std::uint64_t slice_bytes) {
  if (offset >= slice_bytes) throw Error("offset " + hex(offset) + " is outside a PE slice of " + hex(slice_bytes));
  return hbm_addr(sip, die, std::uint64_t{pe} * slice_bytes + offset);
}
inline std::uint64_t pe_resource_addr(unsigned sip, unsigned die, unsigned pe, unsigned sub, std::uint64_t offset) {
  return detail::top(sip, detail::cube_die(die)) | (detail::field(pe, 4, "pe_id") << 29) |
         (detail::field(sub, 4, "pe_sub_unit") << 25) | detail::field(offset, 25, "sub_offset");
}
inline std::uint64_t pe_tcm_addr(unsigned sip, unsigned die, unsigned pe, std::uint64_t offset) {
  return pe_resource_addr(sip, die, pe, static_cast<unsigned>(PeSub::kTcm), offset);
}
inline std::uint64_t mcpu_resource_addr(unsigned sip, unsigned die, unsigned sub, std::uint64_t offset) {
  return detail::top(sip, detail::cube_die(die)) | (std::uint64_t{1} << 34) |
         (detail::field(sub, 5, "mcpu_sub_unit") << 25) | detail::field(offset, 25, "sub_offset");
}
inline std::uint64_t cube_sram_addr(unsigned sip, unsigned die, std::uint64_t offset) {
  return detail::top(sip, detail::cube_die(die)) | (std::uint64_t{2} << 34) | detail::field(offset, 25, "sram_offset");
}
/// IOCPU resource of IO chiplet `chiplet` (0..4 -> die 16..20).
inline std::uint64_t iocpu_resource_addr(unsigned sip, unsigned chiplet, unsigned sub, std::uint64_t offset) {
  if (chiplet >= kIoDies) throw Error("IO chiplet index " + std::to_string(chiplet) + " is out of range (0..4)");
  return detail::top(sip, kFirstIoDie + chiplet) | (detail::field(sub, 4, "iocpu_sub_unit") << 27) |
         detail::field(offset, 27, "sub_offset");
}
/// UAL window of IO chiplet `chiplet`: chiplet offsets [2 GiB, 1 TiB).
inline std::uint64_t ual_addr(unsigned sip, unsigned chiplet, std::uint64_t chiplet_offset) {
  if (chiplet >= kIoDies) throw Error("IO chiplet index " + std::to_string(chiplet) + " is out of range (0..4)");
  if (chiplet_offset < kIocpuRegion) throw Error("UAL offsets start at 2 GiB");
  return detail::top(sip, kFirstIoDie + chiplet) | detail::field(chiplet_offset, 40, "chiplet_offset");
}

}  // namespace kbsim::ahbm
