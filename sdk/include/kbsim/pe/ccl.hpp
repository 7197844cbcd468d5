// CCL algorithms (docs/model.md, "Collectives"): what an algorithm plugin
// provides to the distributed runtime, and the collective configuration
// (ccl.yaml, a configuration section the PE kit declares).
//
//   class MyAllreduce final : public kbsim::ccl::Algorithm {
//    public:
//     static kbsim::ccl::AlgorithmInfo info();   // name, summary, its own parameters, SIP topologies, buffer kinds
//     std::vector<Wire> wiring(const Setup&) const override;   // which PE talks to which, in which direction
//     Launch launch(const Collective&) const override;         // its kernel, grid and arguments
//   };
//   KBSIM_PLUGIN("my_ccl") {
//     kbsim::ccl::add_algorithm<MyAllreduce>(plugin);
//     kbsim::add_kernel(plugin, "my-allreduce", &my_allreduce_kernel, "...");
//   }
//
// The runtime installs the wiring into every PE_IPCQ when the process group is
// initialised (directions' rx rings and their reverse directions computed as
// docs/model.md says), then for each all_reduce launches the kernel on every
// rank's SIP with the runtime's arguments (tensor, rank, world size, n_elem)
// and the algorithm's own, a struct of named fields (KernelArgs below).
// Kernels are ordinary tl code: tl.send / tl.recv in the directions wired.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include "kbsim/ahbm/host_command.hpp"
#include "kbsim/ahbm/system_attrs.hpp"
#include "kbsim/graph.hpp"
#include "kbsim/plugin.hpp"
#include "kbsim/tl/dtype.hpp"
#include "kbsim/tl/tl.hpp"

namespace kbsim::ccl {

using ahbm::PeRef;

enum class SipTopology : std::uint8_t { kRing1d, kTorus2d, kMesh2dNoWrap };
inline constexpr std::string_view kSipTopologyNames[] = {"ring_1d", "torus_2d", "mesh_2d_no_wrap"};

/// The system a collective runs on, as the topology published it.
struct SystemShape {
  unsigned sips = 1, sip_w = 1, sip_h = 1;  ///< the SIP grid (ring_1d: sips x 1)
  SipTopology topology = SipTopology::kRing1d;
  unsigned cube_w = 1, cube_h = 1, pes_per_cube = 1;
  unsigned cubes() const noexcept { return cube_w * cube_h; }

  /// From the AHBM front-end's system attributes; ConfigError if they are missing.
  static SystemShape from(std::span<const RawParam> attrs) {
    auto need = [&](const auto& a) {
      if (auto v = attr(attrs, a)) return *v;
      throw ConfigError("collectives need an AHBM system: the topology publishes no '" + std::string(a.name) + "'");
    };
    auto u = [&](const IntParam& a) { return static_cast<unsigned>(need(a)); };
    using namespace kbsim::ahbm::attrs;
    SystemShape s;
    s.sips = u(kSips);
    s.sip_w = u(kSipW);
    s.sip_h = u(kSipH);
    const std::string name = need(kSipTopology);
    for (std::size_t i = 0; i < std::size(kSipTopologyNames); ++i)
      if (kSipTopologyNames[i] == name) s.topology = static_cast<SipTopology>(i);
    s.cube_w = u(kCubeW);
    s.cube_h = u(kCubeH);
    s.pes_per_cube = u(kPesPerCube);
    return s;
  }
};

/// The SIP neighbours of `rank` (ranks 0..world-1 laid out row-major on the
/// SIP grid) by the system's SIP topology: global_E / global_W along a row
/// (ring_1d: the ring), global_S / global_N along a column; torus_2d wraps,
/// mesh_2d_no_wrap does not. A 2-rank ring has the same peer east and west.
/// (These are ccl::topo's ring_1d, torus_2d and mesh_2d_no_wrap with the
/// inter-SIP names; kbsim/pe/ccl_topologies.hpp has all the reference's
/// patterns.)
inline std::map<std::string, unsigned> sip_neighbors(const SystemShape& s, unsigned world, unsigned rank) {
  std::map<std::string, unsigned> out;
  if (world < 2) return out;
  if (s.topology == SipTopology::kRing1d) {
    out["global_E"] = (rank + 1) % world;
    out["global_W"] = (rank + world - 1) % world;
    return out;
  }
  const unsigned w = s.sip_w, h = s.sip_h, x = rank % w, y = rank / w;
  const bool wrap = s.topology == SipTopology::kTorus2d;
  auto at = [&](unsigned xx, unsigned yy) { return yy * w + xx; };
  if (w > 1 && (wrap || x + 1 < w)) out["global_E"] = at((x + 1) % w, y);
  if (w > 1 && (wrap || x > 0)) out["global_W"] = at((x + w - 1) % w, y);
  if (h > 1 && (wrap || y + 1 < h)) out["global_S"] = at(x, (y + 1) % h);
  if (h > 1 && (wrap || y > 0)) out["global_N"] = at(x, (y + h - 1) % h);
  return out;
}

/// What the runtime asks for when it installs the queues.
struct Setup {
  SystemShape system;
  unsigned world_size = 1;  ///< ranks: SIPs 0..world_size-1
  const Params& params;     ///< the algorithm's ccl.yaml parameters (kbsim/ccl.hpp)
};

/// One queue the algorithm needs: `from` sends in direction `dir` to `to`.
/// The receiving side's direction is found by the reverse-direction rule.
struct Wire {
  PeRef from;
  std::string dir;
  PeRef to;
};

/// One all_reduce on one rank.
struct Collective {
  Setup setup;
  unsigned rank = 0;
  std::uint64_t n_elem = 0;  ///< elements per shard
  DType dtype = DType::kF16;
  /// The cube grid the tensor's shards cover (one shard per cube's pe0: the
  /// SIP's cube mesh; a tensor on one cube: 1 x 1).
  unsigned cube_w = 1, cube_h = 1;
};

/// A kernel argument beside the tensor.
using Scalar = std::variant<std::int64_t, double>;

/// The runtime's own arguments, first in every CCL kernel's list: (tensor, rank, world size, n_elem).
inline constexpr std::size_t kRuntimeArgs = 4;

/// An algorithm's own kernel arguments are a struct whose fields (std::int64_t or double) its `fields` lists once,
/// in order; launch() packs one (Launch::args = pack(own)) and the kernel reads it back by name (KernelArgs):
///
///   struct MyArgs {
///     std::int64_t cube_w = 1, slot_size = 0;
///     static constexpr auto fields = std::make_tuple(&MyArgs::cube_w, &MyArgs::slot_size);
///   };
template <class T>
std::vector<Scalar> pack(const T& own) {
  std::vector<Scalar> out;
  std::apply([&](auto... f) { (out.emplace_back(own.*f), ...); }, T::fields);
  return out;
}

/// What a CCL kernel is launched with: the runtime's arguments and the algorithm's own `T`, by name. A kernel
/// launched with other arguments (a different struct, or none) fails with the kernel's error.
template <class T>
struct KernelArgs {
  const tl::TensorArg& tensor;
  unsigned rank, world;
  std::int64_t n_elem;
  T own;

  explicit KernelArgs(const tl::Args& a)
      : tensor(a.tensor(0)),
        rank(static_cast<unsigned>(a.i64(1))),
        world(static_cast<unsigned>(a.i64(2))),
        n_elem(a.i64(3)),
        own(unpack(a)) {}

 private:
  static T unpack(const tl::Args& a) {
    constexpr std::size_t n = std::tuple_size_v<decltype(T::fields)>;
    if (a.size() != kRuntimeArgs + n)
      throw tl::Error("the kernel takes " + std::to_string(kRuntimeArgs + n) + " arguments (tensor, rank, world, " +
                      "n_elem and its algorithm's " + std::to_string(n) + "), " + std::to_string(a.size()) + " given");
    T out{};
    std::size_t i = kRuntimeArgs;
    auto read = [&](auto field) {
      using V = std::remove_cvref_t<decltype(out.*field)>;
      static_assert(std::is_same_v<V, std::int64_t> || std::is_same_v<V, double>, "fields are std::int64_t or double");
      if constexpr (std::is_same_v<V, double>) {
        out.*field = a.f64(i++);
      } else {
        out.*field = a.i64(i++);
      }
    };
    std::apply([&](auto... f) { (read(f), ...); }, T::fields);
    return out;
  }
};

struct Launch {
  std::string kernel;                     ///< a registered tl kernel
  unsigned grid_cubes = 1, grid_pes = 1;  ///< launched on cubes 0..grid_cubes-1 x PEs 0..grid_pes-1 of the rank's SIP
  /// The algorithm's own arguments, after the runtime's (kRuntimeArgs): pack(its struct).
  std::vector<Scalar> args;
};

class Algorithm {
 public:
  virtual ~Algorithm() = default;
  virtual std::vector<Wire> wiring(const Setup& setup) const = 0;
  virtual Launch launch(const Collective& c) const = 0;
  /// The smallest slot_size this collective needs (an algorithm that sends a
  /// whole shard per message needs a slot that holds one); 0: any.
  virtual std::uint64_t min_slot_size(const Collective& c) const {
    (void)c;
    return 0;
  }
};

/// What an algorithm declares.
struct AlgorithmInfo {
  std::string name;
  std::string summary;
  std::vector<ParamSpec> params;            ///< its own, beside the shared ones (default_params)
  std::vector<std::string> sip_topologies;  ///< SIP topologies it supports (empty: any)
  std::vector<std::string> buffer_kinds;    ///< IPCQ slot memories it supports (empty: any)
};

/// An algorithm as registered: the data of its extension (kind kKind).
struct AlgorithmType {
  AlgorithmInfo info;
  std::function<Algorithm*()> create;
};

/// The extension kind of the algorithms, and the name of the configuration section that configures them.
inline constexpr std::string_view kKind = "ccl";
inline constexpr std::string_view kSectionName = "ccl";

/// Register the algorithm `info` describes, made by `create` (a new one per process group).
inline void add_algorithm(PluginDescriptor& plugin, AlgorithmInfo declared, std::function<Algorithm*()> create) {
  auto type = std::make_shared<const AlgorithmType>(AlgorithmType{std::move(declared), std::move(create)});
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return v.empty() ? std::string("any") : s;
  };
  const AlgorithmInfo& info = type->info;
  plugin.extensions.push_back(
      {std::string(kKind),
       info.name,
       info.summary,
       type,
       info.params,
       {"sip topologies: " + list(info.sip_topologies), "buffer kinds: " + list(info.buffer_kinds)}});
}

/// T derives from Algorithm and has `static AlgorithmInfo info()`.
template <class T>
void add_algorithm(PluginDescriptor& plugin) {
  static_assert(std::is_base_of_v<Algorithm, T>, "a CCL algorithm implements ccl::Algorithm");
  add_algorithm(plugin, T::info(), []() -> Algorithm* { return new T(); });
}

/// The shared parameters (the section's `defaults`; an algorithm's entry may override any but the algorithm).
namespace param {
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
}  // namespace param

inline std::vector<ParamSpec> default_params() {
  using namespace param;
  return {kAlgorithm, kBufferKind, kBackpressure, kNSlots, kSlotSize, kVcChunkSize, kCreditBytes, kWorldSize};
}

/// The `ccl` configuration section (ccl.yaml beside topology.yaml, `kbsim run --ccl FILE`, `--set ccl.*`); the
/// host runtime's plugin declares it.
inline SectionInfo section_info() {
  return {std::string(kSectionName),
          "the collective configuration: the algorithm all_reduce runs and the IPCQ rings' shape",
          default_params(),
          std::string(kKind),
          "algorithms",
          "CCL algorithm",
          std::string(param::kAlgorithm.name)};
}

/// The collective configuration of a run, by algorithm: every registered algorithm's parameters (its own and the
/// shared ones, its entry over the defaults), and the one selected. A bench may copy and adjust it.
struct Config {
  struct Entry {
    const AlgorithmInfo* info = nullptr;
    std::function<Algorithm*()> create;
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
  std::unique_ptr<Algorithm> create(const std::string& name = {}) const {
    return std::unique_ptr<Algorithm>(entry(name).create());
  }

  /// Raise the selected algorithm's slot size to what it needs to all_reduce f16 shards of `n_elem` elements
  /// spread over the cube grid of `shape` (an algorithm that sends a shard per message needs a shard), the value's
  /// origin saying `why`. Returns the new slot size, or 0 when the configured one is enough.
  std::uint64_t fit_slot(const SystemShape& shape, std::uint64_t n_elem, const std::string& why) {
    Params& ap = algorithms.at(algorithm).params;
    const std::uint64_t need =
        create()->min_slot_size({{shape, shape.sips, ap}, 0, n_elem, DType::kF16, shape.cube_w, shape.cube_h});
    if (ap.get(param::kSlotSize) >= static_cast<std::int64_t>(need)) return 0;
    for (ParamEntry& e : ap.entries())
      if (e.name == param::kSlotSize.name) {
        e.value = static_cast<std::int64_t>(need);
        e.origin = why;
      }
    return need;
  }

  static Config from(const Section& section) {
    Config c;
    c.source = section.source;
    c.algorithm = section.selected;
    for (const auto& [name, e] : section.entries) {
      const auto* type = static_cast<const AlgorithmType*>(e.extension->data.get());
      c.algorithms.emplace(name, Entry{&type->info, type->create, e.params});
    }
    return c;
  }
};

/// The run's collective configuration.
inline Config config(const BenchContext& ctx) { return Config::from(ctx.section(kSectionName)); }

}  // namespace kbsim::ccl
