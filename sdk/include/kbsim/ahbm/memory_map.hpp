// The configured memory map of an AHBM system and the checks every initiator
// applies before a request enters the fabric: which node serves an address,
// and whether an access of n bytes there is valid.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kbsim/ahbm/phys_addr.hpp"
#include "kbsim/ahbm/system_attrs.hpp"

namespace kbsim::ahbm {

/// What the topology compiler publishes in Graph::attrs (system_attrs.hpp).
struct MemoryMap {
  unsigned sips = 1;
  unsigned cubes_per_sip = 16;
  unsigned pes_per_cube = 8;  ///< = HBM slices per cube
  unsigned io_chiplets = 1;   ///< per SIP
  std::uint64_t hbm_bytes_per_cube = 48ull << 30;
  std::uint64_t slice_bytes = 6ull << 30;

  /// Read from a generated topology's attributes; throws ConfigError if absent.
  static MemoryMap from(std::span<const RawParam> attrs) {
    auto get = [&](const IntParam& a) -> std::int64_t {
      if (const auto v = attr(attrs, a)) return *v;
      throw ConfigError("the topology does not publish the AHBM attribute '" + std::string(a.name) +
                        "' (is it an AHBM system: topology.yaml)?");
    };
    using namespace kbsim::ahbm::attrs;
    MemoryMap m;
    m.sips = static_cast<unsigned>(get(kSips));
    m.cubes_per_sip = static_cast<unsigned>(get(kCubesPerSip));
    m.pes_per_cube = static_cast<unsigned>(get(kPesPerCube));
    m.io_chiplets = static_cast<unsigned>(get(kIoChiplets));
    m.hbm_bytes_per_cube = static_cast<std::uint64_t>(get(kHbmBytesPerCube));
    m.slice_bytes = static_cast<std::uint64_t>(get(kHbmSliceBytes));
    auto in = [](std::int64_t v, std::int64_t hi) { return v > 0 && v <= hi; };
    if (!in(get(kSips), kMaxSips) || !in(get(kCubesPerSip), kCubeDies) || !in(get(kPesPerCube), 16) ||
        !in(get(kIoChiplets), kIoDies) || get(kHbmSliceBytes) <= 0 || get(kHbmBytesPerCube) <= 0 ||
        m.slice_bytes * m.pes_per_cube < m.hbm_bytes_per_cube)
      throw ConfigError("the topology's AHBM memory-map attributes are inconsistent or out of range");
    return m;
  }
};

/// Where an access goes, once checked.
struct Target {
  Decoded addr;
  std::string node;  ///< the node that serves it, e.g. "sip0.cube3.hbm_ctrl.pe5"
  unsigned cube = 0;
  unsigned pe = 0;  ///< HBM slice owner or PE_LOCAL pe
};

struct AccessCheck {
  bool ok = false;
  Target target;
  std::string error_code;  ///< a decode() code, or ZERO_LENGTH, OVERSIZE, NO_SUCH_SIP, NO_SUCH_CUBE,
                           ///< NO_SUCH_PE, NO_SUCH_CHIPLET, CROSSES_SLICE, UNSUPPORTED
  std::string error;
};

inline std::string prefix(unsigned sip, unsigned cube) {
  return "sip" + std::to_string(sip) + ".cube" + std::to_string(cube);
}

/// The id of the node that serves a checked target (check_access's `target.node`).
inline std::string target_name(const Target& t) {
  const Decoded& a = t.addr;
  switch (a.kind) {
    case AddrKind::kHbm: return prefix(a.sip, a.die) + ".hbm_ctrl.pe" + std::to_string(t.pe);
    case AddrKind::kPeLocal: return prefix(a.sip, a.die) + ".pe" + std::to_string(t.pe) + ".pe_tcm";
    case AddrKind::kMcpuLocal: return prefix(a.sip, a.die) + ".m_cpu";
    case AddrKind::kCubeSram: return prefix(a.sip, a.die) + ".sram";
    case AddrKind::kIocpu:
      return "sip" + std::to_string(a.sip) + ".io" + std::to_string(a.die - kFirstIoDie) + ".io_cpu";
    case AddrKind::kUal: break;
  }
  return {};
}

/// Decode `pa`, check [pa, pa + nbytes) against the architecture and the
/// configured system, and name the node that serves it (unless `name` is false: a caller that finds the node by
/// the target's fields saves building its id per request).
inline AccessCheck check_access(const MemoryMap& m, std::uint64_t pa, std::uint64_t nbytes, bool name = true) {
  AccessCheck c;
  auto bad = [&](const char* code, std::string what) {
    c.error_code = code;
    c.error = "address " + hex(pa) + ": " + std::move(what);
    return c;
  };
  DecodeResult d = decode(pa);
  if (!d.ok) {
    c.error_code = d.error_code;
    c.error = d.error;
    return c;
  }
  const Decoded& a = d.addr;
  c.target.addr = a;
  if (nbytes == 0) return bad("ZERO_LENGTH", "a request of 0 bytes");
  if (a.sip >= m.sips)
    return bad("NO_SUCH_SIP",
               "SIP " + std::to_string(a.sip) + " does not exist (the system has " + std::to_string(m.sips) + ")");
  std::uint64_t capacity = a.budget;
  switch (a.kind) {
    case AddrKind::kHbm:
    case AddrKind::kPeLocal:
    case AddrKind::kMcpuLocal:
    case AddrKind::kCubeSram:
      if (a.die >= m.cubes_per_sip)
        return bad("NO_SUCH_CUBE", "cube " + std::to_string(a.die) + " does not exist (a SIP has " +
                                       std::to_string(m.cubes_per_sip) + ")");
      c.target.cube = a.die;
      break;
    case AddrKind::kIocpu:
      if (a.die - kFirstIoDie >= m.io_chiplets)
        return bad("NO_SUCH_CHIPLET", "IO chiplet " + std::to_string(a.die - kFirstIoDie) + " does not exist");
      break;
    case AddrKind::kUal: return bad("UNSUPPORTED", "UAL addresses are not modeled");
  }
  switch (a.kind) {
    case AddrKind::kHbm: {
      capacity = m.hbm_bytes_per_cube;
      if (a.offset >= capacity)
        return bad("OVERSIZE", "HBM offset " + hex(a.offset) + " is beyond the cube's " + hex(capacity) + " bytes");
      c.target.pe = static_cast<unsigned>(a.offset / m.slice_bytes);
      if (nbytes > capacity - a.offset)
        return bad("OVERSIZE", std::to_string(nbytes) + " bytes at HBM offset " + hex(a.offset) +
                                   " exceed the cube's " + std::to_string(capacity) + " bytes");
      if ((a.offset + nbytes - 1) / m.slice_bytes != c.target.pe)
        return bad("CROSSES_SLICE", std::to_string(nbytes) + " bytes cross from PE " + std::to_string(c.target.pe) +
                                        "'s HBM slice into the next");
      break;
    }
    case AddrKind::kPeLocal:
      if (a.pe >= m.pes_per_cube) return bad("NO_SUCH_PE", "PE " + std::to_string(a.pe) + " does not exist");
      c.target.pe = a.pe;
      break;
    case AddrKind::kMcpuLocal:
    case AddrKind::kCubeSram:
    case AddrKind::kIocpu:
    case AddrKind::kUal: break;
  }
  if (name) c.target.node = target_name(c.target);
  if (nbytes > capacity || a.offset > capacity - nbytes)
    return bad("OVERSIZE", std::to_string(nbytes) + " bytes at offset " + hex(a.offset) + " exceed the unit's " +
                               std::to_string(capacity) + " bytes");
  c.ok = true;
  return c;
}

}  // namespace kbsim::ahbm
