// The collective configuration of a run (docs/model.md, "CCL configuration"):
// ccl.yaml beside topology.yaml, or `--ccl FILE`, with `--set ccl.KEY=VALUE`
// applied to it. The core reads and checks it like the topology (unknown keys
// and wrong types are errors naming file:line:column):
//
//   defaults:                 # kCclDefaults: what every algorithm shares
//     algorithm: lrab_hierarchical_allreduce
//     buffer_kind: tcm
//     ...
//   algorithms:               # one entry per registered CCL algorithm (optional)
//     ring_allreduce: { chunk_bytes: 2048, n_slots: 8 }   # its own parameters, or defaults to override
//
// What a collective means (wiring, kernels) is the model's business: the
// algorithm plugins implement the PE kit's ccl::Algorithm (kbsim/pe/ccl.hpp).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kbsim/params.hpp"

namespace kbsim {

/// A collective algorithm. The registry discovers, lists and deduplicates
/// them (add_ccl<T>, kbsim/plugin.hpp); what one does is the model's
/// interface (the PE kit's ccl::Algorithm, kbsim/pe/ccl.hpp, derives from this).
class CclAlgorithm {
 public:
  virtual ~CclAlgorithm() = default;
};

struct CclInfo {
  std::string name;
  std::string summary;
  std::vector<ParamSpec> params;            ///< its own, beside the defaults (ccl_default_params)
  std::vector<std::string> sip_topologies;  ///< SIP topologies it supports (empty: any)
  std::vector<std::string> buffer_kinds;    ///< IPCQ slot memories it supports (empty: any)
};

/// The `defaults` section's parameters (an algorithm's entry may override any of them), each declared once.
namespace ccl_param {
inline constexpr StringParam kAlgorithm{"algorithm", "lrab_hierarchical_allreduce",
                                        "the CCL algorithm all_reduce runs"};
inline constexpr StringParam kBufferKind{"buffer_kind", "tcm",
                                         "IPCQ slot memory: tcm (PE TCM), sram (cube SRAM) or hbm (PE-local HBM)"};
inline constexpr StringParam kBackpressure{"backpressure", "sleep",
                                           "a send facing a full ring: sleep (woken by the credit) or poll"};
inline constexpr IntParam kNSlots{"n_slots", 4, "slots per direction's rx ring"};
inline constexpr IntParam kSlotSize{"slot_size", 4096, "bytes per slot; one message must fit"};
inline constexpr IntParam kVcChunkSize{"vc_chunk_size", 256,
                                       "PE_DMA communication-channel chunk; kbsim moves every message in link flits "
                                       "(the topology's flit_bytes), so only 256 is accepted"};
inline constexpr IntParam kCreditBytes{"ipcq_credit_size_bytes", 16, "size of a credit message on the fast path"};
inline constexpr IntParam kWorldSize{"world_size", 0, "ranks (one per SIP); 0 = the SIP count"};
}  // namespace ccl_param

inline std::vector<ParamSpec> ccl_default_params() {
  using namespace ccl_param;
  return {kAlgorithm, kBufferKind, kBackpressure, kNSlots, kSlotSize, kVcChunkSize, kCreditBytes, kWorldSize};
}

struct CclConfig {
  /// One registered algorithm: its declaration, its factory and its parameters
  /// (its own declarations and the defaults, its ccl.yaml entry over the
  /// defaults section).
  struct Entry {
    const CclInfo* info = nullptr;
    CclAlgorithm* (*create)() = nullptr;
    Params params;
  };
  std::string source;                       ///< the file it was read from
  std::string algorithm;                    ///< the selected algorithm (defaults.algorithm, or its --set)
  std::map<std::string, Entry> algorithms;  ///< every registered algorithm, written in the file or not

  /// The entry of `name` (the selected algorithm when empty); ConfigError if it is not registered.
  const Entry& entry(const std::string& name = {}) const {
    const std::string& n = name.empty() ? algorithm : name;
    auto it = algorithms.find(n);
    if (it == algorithms.end()) throw ConfigError(source + ": no CCL algorithm named '" + n + "' is registered");
    return it->second;
  }
  const Params& of(const std::string& name = {}) const { return entry(name).params; }
  std::unique_ptr<CclAlgorithm> create(const std::string& name = {}) const {
    return std::unique_ptr<CclAlgorithm>(entry(name).create());
  }
};

}  // namespace kbsim
