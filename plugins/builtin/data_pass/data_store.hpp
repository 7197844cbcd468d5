// The data pass's memory (docs/model.md, "Memory of the data pass"): (space,
// address) -> immutable versions, each valid from the time it was written. A
// read names a time and sees, byte by byte, the newest version written at or
// before it, so a later write is never seen by an earlier reader, and a value
// once read (a snapshot) is never changed by later writes.
//
// HBM is byte-addressable: a read may cover part of a tensor or several.
// Cube SRAM is physical memory too: its addresses share HBM's map (a tl.store
// to an SRAM address and a recv copied there are the same bytes).
// TCM holds compute results: a read must match one written value's size
// (reinterpretation by dtype is allowed, the shape is checked by bytes).
#pragma once

#include <map>
#include <vector>

#include "compute.hpp"

namespace kbsim::data_pass {

/// The map `s` is kept in: TCM its own; HBM and cube SRAM one physical memory.
inline tl::Space memory_of(tl::Space s) noexcept { return s == tl::Space::kSram ? tl::Space::kHbm : s; }

class DataStore {
 public:
  /// From time `t` on, `bytes` are at `addr` of `space` (at equal times the later write wins).
  void write(tl::Space space, std::uint64_t addr, Tick t, BytesPtr bytes);
  /// The `nbytes` at `addr` as of time `t` (zeros where nothing was written).
  /// A read that matches one version exactly returns it without a copy.
  BytesPtr read(tl::Space space, std::uint64_t addr, std::uint64_t nbytes, Tick t) const;
  /// A value of `shape` and `dtype` at `addr` as of `t`; throws std::invalid_argument
  /// when a TCM read does not match the size of the value there.
  Value read(tl::Space space, std::uint64_t addr, const Shape& shape, DType dtype, Tick t) const;

  std::size_t versions() const noexcept { return versions_; }
  std::uint64_t bytes_held() const noexcept { return bytes_; }

 private:
  struct Version {
    Tick t;
    std::uint64_t seq;
    BytesPtr bytes;
  };
  struct Space {
    std::map<std::uint64_t, std::vector<Version>> slots;  ///< by address; versions in (t, seq) order
    std::uint64_t longest = 0;                            ///< the longest version (bounds the overlap search)
  };
  static std::size_t index(tl::Space s) noexcept { return memory_of(s) == tl::Space::kTcm ? 1 : 0; }
  const Space* space(tl::Space s) const noexcept { return &spaces_[index(s)]; }

  Space spaces_[2];
  std::uint64_t seq_ = 0, bytes_ = 0;
  std::size_t versions_ = 0;
};

}  // namespace kbsim::data_pass
