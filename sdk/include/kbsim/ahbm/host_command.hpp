// Host commands that fan out through the control plane (docs/model.md,
// "Host commands and the launch barrier"): kernel launches and MMU mapping
// updates. The host hands one to IO_CPU; IO_CPU sends a 0-byte leg to the M_CPU
// of every cube concerned, each M_CPU a leg to every PE concerned (PE_CPU for a
// launch, PE_MMU for a mapping); answers are aggregated on the way back into
// one completion for the host.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "kbsim/ahbm/memory.hpp"
#include "kbsim/ahbm/names.hpp"
#include "kbsim/tl/tl.hpp"

namespace kbsim::ahbm {

struct PeRef {
  unsigned sip = 0, cube = 0, pe = 0;
  bool operator==(const PeRef&) const = default;
};

/// The PE a PE sub-component's node id names ("sip{S}.cube{C}.pe{P}.<part>"); none for any other id. The one
/// place a component learns its PE from its id.
inline std::optional<PeRef> pe_of(std::string_view id) {
  const names::Location loc = names::locate(id);
  if (loc.sip < 0 || loc.cube < 0 || loc.pe < 0 || id.find(".hbm_ctrl.") != std::string_view::npos) return {};
  return PeRef{static_cast<unsigned>(loc.sip), static_cast<unsigned>(loc.cube), static_cast<unsigned>(loc.pe)};
}

/// One mapping of a PE's MMU: [va, va + size) -> [pa, pa + size).
struct MmuEntry {
  PeRef pe;  ///< the PE whose MMU installs it
  std::uint64_t va = 0, pa = 0, size = 0;
};

/// What one PE reports for a launch.
struct PeResult {
  PeRef pe;
  Tick start = 0;  ///< kernel body started (the launch barrier)
  Tick end = 0;    ///< kernel returned
  double pe_exec_ns = 0, dma_ns = 0, compute_ns = 0;
  std::array<double, 6> stage_busy_ns{};              ///< per pe::StageType, summed over the kernel's commands
  Tick composite_first = kNever, composite_last = 0;  ///< span of its composite pipelines (none: first > last)
  std::uint64_t commands = 0;
  /// The phases the kernel marked (tl.phase): name and start, in order.
  std::vector<std::pair<std::string, Tick>> phases;

  void save(ByteWriter& w) const {
    w.put(pe);
    w.put(start);
    w.put(end);
    w.put(pe_exec_ns);
    w.put(dma_ns);
    w.put(compute_ns);
    w.put(stage_busy_ns);
    w.put(composite_first);
    w.put(composite_last);
    w.put(commands);
    w.put(static_cast<std::uint64_t>(phases.size()));
    for (const auto& [name, at] : phases) {
      w.put_string(name);
      w.put(at);
    }
  }
  void load(ByteReader& r) {
    pe = r.get<PeRef>();
    start = r.get<Tick>();
    end = r.get<Tick>();
    pe_exec_ns = r.get<double>();
    dma_ns = r.get<double>();
    compute_ns = r.get<double>();
    stage_busy_ns = r.get<std::array<double, 6>>();
    composite_first = r.get<Tick>();
    composite_last = r.get<Tick>();
    commands = r.get<std::uint64_t>();
    phases.resize(r.get_count());
    for (auto& [name, at] : phases) {
      name = r.get_string();
      at = r.get<Tick>();
    }
  }
};

/// How a launch ends when PEs fail (the envelope's `failure_policy`, docs/model.md "Host commands and the launch
/// barrier"). kFailFast (the reference's default): the command completes, failed, as soon as the first failed
/// PE's answer reaches a node that merges (M_CPU, then IO_CPU); the answers still out are dropped there.
/// kCollectAll: it completes once every PE answered, its error naming every failed PE.
enum class FailurePolicy : std::uint8_t { kFailFast, kCollectAll };

/// A PE's failed answer, as merged (HostCommand::failures).
struct PeFailure {
  PeRef pe;
  Completion completion;
};

class HostCommand : public Message {
 public:
  static constexpr std::string_view kName = "ahbm.HostCommand";
  static constexpr TypeId kType = type_id(kName);
  HostCommand() noexcept : Message(kType) {}

  class Client {
   public:
    virtual void on_complete(HostCommand& cmd) = 0;

   protected:
    ~Client() = default;
  };

  enum class Kind : std::uint8_t { kLaunch, kMmuMap, kMmuUnmap };
  Kind kind = Kind::kLaunch;
  std::uint64_t correlation_id = 0;
  std::vector<PeRef> targets;           ///< the PEs concerned (this leg's share of them)
  unsigned target_device = kAnyDevice;  ///< the SIP it is for; IO_CPU refuses another (WRONG_DEVICE)
  FailurePolicy failure_policy = FailurePolicy::kFailFast;

  // --- launch ---
  std::string kernel;
  std::shared_ptr<const tl::Args> args;
  unsigned grid_pes = 1, grid_cubes = 1;  ///< num_programs(0), num_programs(1)
  bool has_start = false;                 ///< target_start is stamped
  Tick target_start = 0;                  ///< every PE starts the kernel body at this time

  // --- MMU ---
  std::shared_ptr<const std::vector<MmuEntry>> entries;

  // --- filled in along the way ---
  Ref<HostCommand> parent;
  NodeIndex initiator = 0;  ///< where the answer goes
  bool is_response = false;
  Completion completion;
  std::vector<PeResult> results;                      ///< launch: one per PE
  std::vector<PeFailure> failures;                    ///< the failed PEs' answers merged so far
  double pe_exec_ns = 0, dma_ns = 0, compute_ns = 0;  ///< launch: maximum over the PEs (M_CPU / IO_CPU merge)
  Tick t_issue = 0, t_done = 0;
  Client* client = nullptr;

  /// Fold a leg's answer into this command (results appended, times max-merged,
  /// the first failure kept, every failed PE recorded: a failed leg without
  /// failures of its own, a PE's answer, counts as each of its targets failing).
  void merge(const HostCommand& leg) {
    if (!leg.completion.ok) {
      if (completion.ok) completion = leg.completion;
      if (leg.failures.empty())
        for (const PeRef& pe : leg.targets) failures.push_back({pe, leg.completion});
      else
        failures.insert(failures.end(), leg.failures.begin(), leg.failures.end());
    }
    results.insert(results.end(), leg.results.begin(), leg.results.end());
    pe_exec_ns = std::max(pe_exec_ns, leg.pe_exec_ns);
    dma_ns = std::max(dma_ns, leg.dma_ns);
    compute_ns = std::max(compute_ns, leg.compute_ns);
  }

  /// The completion of a failed command from its failures (none: left as it is), in (sip, cube, pe) order. The
  /// error code is the first failed PE's. kFailFast: "<pe>: <its message>"; kCollectAll: "<n> of <targets> PEs
  /// failed: <pe> <code>, ...; <first pe>: <its message>".
  void summarize_failures() {
    if (failures.empty()) return;
    auto key = [](const PeFailure& f) { return std::tie(f.pe.sip, f.pe.cube, f.pe.pe); };
    std::stable_sort(failures.begin(), failures.end(),
                     [&](const PeFailure& a, const PeFailure& b) { return key(a) < key(b); });
    const PeFailure& first = failures.front();
    auto name = [](const PeRef& pe) { return names::pe(pe.sip, pe.cube, pe.pe); };
    std::string detail = name(first.pe) + ": " + first.completion.error_message;
    if (failure_policy == FailurePolicy::kCollectAll) {
      std::string list;
      for (const PeFailure& f : failures)
        list += (list.empty() ? "" : ", ") + name(f.pe) + " " + f.completion.error_code;
      detail = std::to_string(failures.size()) + " of " + std::to_string(targets.size()) + " PEs failed: " + list +
               "; " + detail;
    }
    completion = {false, first.completion.error_code, std::move(detail)};
  }
  // Between the processes of a split run (docs/scale-out.md): a command and its answer end where the command was
  // made, so it comes back there as the same object (its client and parent stay there); its other fields go both
  // ways.
  bool returns() const noexcept override { return true; }
  void save(ByteWriter& w) const override {
    w.put(kind);
    w.put(correlation_id);
    w.put_vector<PeRef>(targets);
    w.put(target_device);
    w.put(failure_policy);
    w.put_string(kernel);
    w.put(args != nullptr);
    if (args) tl::save(w, *args);
    w.put(grid_pes);
    w.put(grid_cubes);
    w.put(has_start);
    w.put(target_start);
    w.put(entries != nullptr);
    if (entries) {
      w.put(static_cast<std::uint64_t>(entries->size()));
      for (const MmuEntry& e : *entries) {  // field by field: the struct has padding
        w.put(e.pe);
        w.put(e.va);
        w.put(e.pa);
        w.put(e.size);
      }
    }
    w.put(initiator);
    w.put(is_response);
    completion.save(w);
    w.put(static_cast<std::uint64_t>(results.size()));
    for (const PeResult& pr : results) pr.save(w);
    w.put(static_cast<std::uint64_t>(failures.size()));
    for (const PeFailure& f : failures) {
      w.put(f.pe);
      f.completion.save(w);
    }
    w.put(pe_exec_ns);
    w.put(dma_ns);
    w.put(compute_ns);
    w.put(t_issue);
    w.put(t_done);
  }
  void load(ByteReader& r) override {
    kind = r.get<Kind>();
    correlation_id = r.get<std::uint64_t>();
    targets = r.get_vector<PeRef>();
    target_device = r.get<unsigned>();
    failure_policy = r.get<FailurePolicy>();
    kernel = r.get_string();
    args = nullptr;
    entries = nullptr;
    if (r.get<bool>()) {
      auto a = std::make_shared<tl::Args>();
      tl::load(r, *a);
      args = std::move(a);
    }
    grid_pes = r.get<unsigned>();
    grid_cubes = r.get<unsigned>();
    has_start = r.get<bool>();
    target_start = r.get<Tick>();
    if (r.get<bool>()) {
      std::vector<MmuEntry> es(r.get_count());
      for (MmuEntry& e : es) {
        e.pe = r.get<PeRef>();
        e.va = r.get<std::uint64_t>();
        e.pa = r.get<std::uint64_t>();
        e.size = r.get<std::uint64_t>();
      }
      entries = std::make_shared<const std::vector<MmuEntry>>(std::move(es));
    }
    initiator = r.get<NodeIndex>();
    is_response = r.get<bool>();
    completion.load(r);
    results.resize(r.get_count());
    for (PeResult& pr : results) pr.load(r);
    failures.resize(r.get_count());
    for (PeFailure& f : failures) {
      f.pe = r.get<PeRef>();
      f.completion.load(r);
    }
    pe_exec_ns = r.get<double>();
    dma_ns = r.get<double>();
    compute_ns = r.get<double>();
    t_issue = r.get<Tick>();
    t_done = r.get<Tick>();
  }

  /// A leg for `targets`, on behalf of this command.
  Ref<HostCommand> leg(std::vector<PeRef> leg_targets) {
    Ref<HostCommand> l = make_message<HostCommand>();
    l->kind = kind;
    l->correlation_id = correlation_id;
    l->targets = std::move(leg_targets);
    l->target_device = target_device;
    l->failure_policy = failure_policy;
    l->kernel = kernel;
    l->args = args;
    l->grid_pes = grid_pes;
    l->grid_cubes = grid_cubes;
    l->has_start = has_start;
    l->target_start = target_start;
    l->entries = entries;
    l->t_issue = t_issue;
    l->parent = Ref<HostCommand>(this);
    return l;
  }
};

/// Implemented by the component the host hands commands to (IO_CPU).
class CommandTarget {
 public:
  virtual void submit(Ref<HostCommand> cmd, HostCommand::Client* client) = 0;

 protected:
  ~CommandTarget() = default;
};

inline CommandTarget* as_command_target(Component& c) { return dynamic_cast<CommandTarget*>(&c); }

/// Implemented by PE_MMU: VA -> PA translation for the PE's engines (docs/model.md, "The MMU").
class Translator {
 public:
  struct Result {
    bool mapped = false;  ///< false: a page fault, not an error; the address is used as a PA
    std::uint64_t pa = 0;
    std::uint64_t contiguous = 0;  ///< bytes from va that stay inside the same mapping
  };
  virtual Result translate(std::uint64_t va) const = 0;
  /// What each translation costs the caller (the TLB overhead).
  virtual Tick overhead() const = 0;
  /// The page size of its mappings, in bytes (the host runtime lays tensors out in these pages).
  virtual std::uint64_t page_size() const = 0;

 protected:
  ~Translator() = default;
};

inline Translator* as_translator(Component& c) { return dynamic_cast<Translator*>(&c); }

/// The physical address of [va, va + nbytes) through `mmu`: va itself when
/// its first byte is unmapped (taken as physical already); nullopt when a
/// mapped range does not continue contiguously in physical memory.
inline std::optional<std::uint64_t> physical_range(const Translator& mmu, std::uint64_t va, std::uint64_t nbytes) {
  const Translator::Result first = mmu.translate(va);
  if (!first.mapped) return va;
  for (std::uint64_t off = first.contiguous; off < nbytes;) {
    const Translator::Result next = mmu.translate(va + off);
    if (!next.mapped || next.pa != first.pa + off || next.contiguous == 0) return std::nullopt;
    off += next.contiguous;
  }
  return first.pa;
}

}  // namespace kbsim::ahbm
