// builtin.pe_mmu: the PE's MMU (docs/model.md, "The MMU"). A graph node, so
// mapping updates pay the fabric latency from IO_CPU through the cube's M_CPU;
// and a sibling utility (ahbm::Translator) the PE's engines and PE_CPU call
// directly.
//
// Regions may be smaller than a page (a simulator stopgap for sub-page shards).
// The installed regions are kept in install order; lookups use a table of the
// disjoint visible pieces keyed by VA, where a later mapping covers an earlier
// one. Unmapping removes only regions fully inside the range, so an earlier
// region a removed one covered becomes visible again.
#include <map>
#include <vector>

#include "kbsim/ahbm/host_command.hpp"
#include "kbsim/ahbm/names.hpp"
#include "kbsim/plugin.hpp"

namespace {

using kbsim::Ref;
using kbsim::ahbm::HostCommand;

constexpr kbsim::IntParam kPageSize{"page_size", 4096, "page size in bytes (power of two); regions may be smaller"};
constexpr kbsim::FloatParam kTlbOverheadNs{"tlb_overhead_ns", 0.0, "time each translation costs its caller"};

class PeMmu final : public kbsim::Component, public kbsim::ahbm::Translator {
 public:
  explicit PeMmu(const kbsim::ComponentContext& ctx)
      : Component(ctx),
        page_size_(params().get(kPageSize)),
        overhead_(kbsim::ns_to_ticks(params().get(kTlbOverheadNs))),
        maps_(stat(kStatMaps)),
        unmaps_(stat(kStatUnmaps)),
        pages_(stat(kStatPages)),
        translations_(stat(kStatTranslations)),
        faults_(stat(kStatFaults)) {
    params().check(page_size_ > 0 && (page_size_ & (page_size_ - 1)) == 0, kPageSize, "must be a power of two");
    params().check(params().get(kTlbOverheadNs) >= 0, kTlbOverheadNs, "must be >= 0");
    const auto pe = kbsim::ahbm::pe_of(id());
    if (!pe) fail("a pe_mmu must be part of a PE (sip{S}.cube{C}.pe{P}.pe_mmu)");
    self_ = *pe;
  }

  // Statistics, declared once: info() lists them, stat() binds them.
  static constexpr kbsim::StatDef kStatMaps{"maps", kbsim::StatKind::kCounter, "regions", "mappings installed"};
  static constexpr kbsim::StatDef kStatUnmaps{"unmaps", kbsim::StatKind::kCounter, "regions", "mappings removed"};
  static constexpr kbsim::StatDef kStatPages{"pages", kbsim::StatKind::kCounter, "pages",
                                             "pages the installed mappings touch (summed per mapping)"};
  static constexpr kbsim::StatDef kStatTranslations{"translations", kbsim::StatKind::kCounter, "lookups",
                                                    "translations asked for"};
  static constexpr kbsim::StatDef kStatFaults{"faults", kbsim::StatKind::kCounter, "lookups",
                                              "translations of an unmapped VA (used as a PA)"};

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "pe_mmu";
    i.summary = "PE MMU: installs VA->PA mappings sent over the fabric and translates for the PE's engines";
    i.params = {kPageSize, kTlbOverheadNs};
    i.ports = {{"command", "to and from its PE's router: mapping commands from the M_CPU and their answers",
                kbsim::message_types<HostCommand>()}};
    i.stats = {kStatMaps, kStatUnmaps, kStatPages, kStatTranslations, kStatFaults};
    return i;
  }

  void setup() override { memory_view_ = find_view("memory"); }

  void on_message(kbsim::PortIndex, Ref<kbsim::Message> msg) override {
    if (!msg->is<HostCommand>()) fail("received a message that is not an MMU command");
    auto& cmd = msg->as<HostCommand>();
    if (cmd.is_response || cmd.kind == HostCommand::Kind::kLaunch)
      fail("received a command that is not an MMU map or unmap");
    if (cmd.entries && cmd.kind == HostCommand::Kind::kMmuMap) install(*cmd.entries);
    if (cmd.entries && cmd.kind == HostCommand::Kind::kMmuUnmap) remove(*cmd.entries);
    cmd.is_response = true;
    cmd.bytes = 0;
    const kbsim::Route& back = route_to(cmd.initiator, memory_view_);
    cmd.route = &back;
    send(back.ports.front(), std::move(msg));
  }

  Result translate(std::uint64_t va) const override {
    ++translations_.count;
    // An engine translates address after address of one tensor: the piece found last usually holds the next.
    if (va >= hit_.va && va < hit_.end) return {true, hit_.pa + (va - hit_.va), hit_.end - va};
    auto it = visible_.upper_bound(va);
    std::uint64_t next = it == visible_.end() ? ~std::uint64_t{0} : it->first;
    if (it != visible_.begin() && std::prev(it)->second.end > va) {
      const auto& [start, piece] = *std::prev(it);
      hit_ = {start, piece.end, piece.pa};
      return {true, piece.pa + (va - start), piece.end - va};
    }
    ++faults_.count;
    return {false, va, next - va};
  }
  kbsim::Tick overhead() const override { return overhead_; }
  std::uint64_t page_size() const override { return static_cast<std::uint64_t>(page_size_); }

 private:
  struct Region {
    std::uint64_t va, end, pa;
  };
  struct Piece {
    std::uint64_t end, pa;  ///< [key, end) -> [pa, ...)
  };

  void install(const std::vector<kbsim::ahbm::MmuEntry>& entries) {
    const auto page = static_cast<std::uint64_t>(page_size_);
    for (const auto& e : entries) {
      if (e.pe != self_ || e.size == 0) continue;
      regions_.push_back({e.va, e.va + e.size, e.pa});
      paint(regions_.back());
      ++maps_.count;
      pages_.count += (e.va + e.size - 1) / page - e.va / page + 1;
    }
  }

  void remove(const std::vector<kbsim::ahbm::MmuEntry>& entries) {
    std::size_t before = regions_.size();
    for (const auto& e : entries)
      if (e.pe == self_)
        std::erase_if(regions_, [&](const Region& r) { return r.va >= e.va && r.end <= e.va + e.size; });
    if (regions_.size() == before) return;
    unmaps_.count += before - regions_.size();
    visible_.clear();
    hit_ = {0, 0, 0};
    for (const Region& r : regions_) paint(r);
  }

  /// Make `r` the visible mapping of its range, trimming what it covers.
  void paint(const Region& r) {
    hit_ = {0, 0, 0};
    auto it = visible_.lower_bound(r.va);
    if (it != visible_.begin()) {
      auto& [start, piece] = *std::prev(it);
      if (piece.end > r.end) visible_[r.end] = {piece.end, piece.pa + (r.end - start)};
      if (piece.end > r.va) piece.end = r.va;
    }
    while (it != visible_.end() && it->first < r.end) {
      if (it->second.end > r.end) visible_[r.end] = {it->second.end, it->second.pa + (r.end - it->first)};
      it = visible_.erase(it);
    }
    visible_[r.va] = {r.end, r.pa};
  }

  std::int64_t page_size_;
  kbsim::Tick overhead_;
  kbsim::ahbm::PeRef self_;
  kbsim::ViewId memory_view_ = 0;
  std::vector<Region> regions_;             ///< in install order
  std::map<std::uint64_t, Piece> visible_;  ///< disjoint, keyed by first VA
  mutable Region hit_{0, 0, 0};             ///< the piece translate found last (empty after any change)
  kbsim::Stat &maps_, &unmaps_, &pages_, &translations_, &faults_;
};

}  // namespace

KBSIM_PLUGIN("pe_mmu") { kbsim::add_component<PeMmu>(plugin); }
