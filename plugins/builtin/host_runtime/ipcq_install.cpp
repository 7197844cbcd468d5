#include "ipcq_install.hpp"

#include <algorithm>
#include <set>

#include "kbsim/ahbm/names.hpp"

namespace kbsim::host_runtime {

namespace {

std::string name(const ahbm::PeRef& p) { return ahbm::names::pe(p.sip, p.cube, p.pe); }

/// The standard directions first, in their fixed order; then others by name.
bool direction_less(const std::string& a, const std::string& b) {
  auto rank = [](const std::string& d) {
    auto it = std::find(pe::kDirections.begin(), pe::kDirections.end(), d);
    return static_cast<std::size_t>(it - pe::kDirections.begin());
  };
  const std::size_t ra = rank(a), rb = rank(b);
  return ra != rb ? ra < rb : a < b;
}

}  // namespace

pe::IpcqConfig ipcq_config(const Params& p) {
  // The values the core's reading of ccl.yaml checked only for type (it does not know what they mean).
  using namespace ccl::param;
  auto one_of = [&](const StringParam& key, std::initializer_list<const char*> allowed) {
    const std::string& v = p.get(key);
    std::string list;
    for (const char* a : allowed) {
      if (v == a) return;
      list += (list.empty() ? "" : ", ") + std::string(a);
    }
    p.check(false, key, "must be one of " + list + ", got '" + v + "'");
  };
  one_of(kBufferKind, {"tcm", "sram", "hbm"});
  one_of(kBackpressure, {"sleep", "poll"});
  p.check(p.get(kNSlots) >= 1 && p.get(kNSlots) <= 1024, kNSlots, "must be between 1 and 1024");
  p.check(p.get(kSlotSize) >= 1 && p.get(kSlotSize) <= (std::int64_t{1} << 30), kSlotSize,
          "must be between 1 byte and 1 GiB");
  p.check(p.get(kVcChunkSize) == 256, kVcChunkSize,
          "other than 256 is not modelled: IPCQ messages cross links in the topology's flits (flit_bytes)");
  p.check(p.get(kCreditBytes) >= 0 && p.get(kCreditBytes) <= 4096, kCreditBytes, "must be between 0 and 4096");
  pe::IpcqConfig c;
  const std::string& kind = p.get(kBufferKind);
  c.buffer_kind = kind == "sram" ? pe::BufferKind::kSram : kind == "hbm" ? pe::BufferKind::kHbm : pe::BufferKind::kTcm;
  c.backpressure = p.get(kBackpressure) == "poll" ? pe::Backpressure::kPoll : pe::Backpressure::kSleep;
  c.n_slots = static_cast<std::uint32_t>(p.get(kNSlots));
  c.slot_size = static_cast<std::uint64_t>(p.get(kSlotSize));
  c.credit_bytes = static_cast<std::uint32_t>(p.get(kCreditBytes));
  return c;
}

QueueTables plan_queues(const std::vector<ccl::Wire>& wires, const pe::IpcqConfig& cfg) {
  // Each PE's directions and where they point.
  std::map<ahbm::PeRef, std::map<std::string, ahbm::PeRef>, PeLess> table;
  for (const ccl::Wire& w : wires) {
    if (w.dir.empty()) throw ConfigError("IPCQ wiring: a wire from " + name(w.from) + " has no direction");
    if (w.from == w.to) throw ConfigError("IPCQ wiring: " + name(w.from) + " direction " + w.dir + " points at itself");
    auto [it, fresh] = table[w.from].emplace(w.dir, w.to);
    if (!fresh && !(it->second == w.to))
      throw ConfigError("IPCQ wiring: " + name(w.from) + " direction " + w.dir + " points at both " + name(it->second) +
                        " and " + name(w.to));
  }
  // Address order and rx rings (I3.1: each PE's rings fit its IPCQ space, so rings never overlap).
  const std::uint64_t span = cfg.bytes_per_direction();
  std::map<ahbm::PeRef, std::vector<std::string>, PeLess> order;
  for (auto& [pe, dirs] : table) {
    std::vector<std::string>& o = order[pe];
    for (const auto& [d, peer] : dirs) o.push_back(d);
    std::sort(o.begin(), o.end(), direction_less);
    if (o.size() * span > pe::kIpcqPeSpan)
      throw ConfigError("IPCQ wiring breaks invariant I3.1 (disjoint rx rings): " + name(pe) + " has " +
                        std::to_string(o.size()) + " directions x " + std::to_string(cfg.n_slots) + " slots x " +
                        std::to_string(cfg.slot_size) + " bytes, more than the " +
                        std::to_string(pe::kIpcqPeSpan >> 20) + " MiB of IPCQ address space a PE has; lower " +
                        "ccl.yaml n_slots or slot_size");
  }
  auto rx_base = [&](const ahbm::PeRef& pe, const std::string& d) {
    const auto& o = order.at(pe);
    return pe::ipcq_pe_base(pe) + static_cast<std::uint64_t>(std::find(o.begin(), o.end(), d) - o.begin()) * span;
  };
  // The reverse-direction rule: the peer's opposite direction if it points back, else its direction of the
  // same name if that points back (a symmetric exchange), else its first unclaimed direction pointing back.
  QueueTables out;
  std::set<std::pair<std::string, std::string>> taken;  // (peer node, peer dir) rings already paired (I3)
  for (auto& [pe, dirs] : table) {
    for (const std::string& d : order.at(pe)) {
      const ahbm::PeRef& peer = dirs.at(d);
      auto pt = table.find(peer);
      std::string back;
      const auto& self = pe;  // a lambda may not capture a structured binding before clang 16
      auto points_back = [&](const std::string& pd) {
        if (pt == table.end()) return false;
        auto it = pt->second.find(pd);
        return it != pt->second.end() && it->second == self;
      };
      const std::string opp(pe::opposite_direction(d));
      if (!opp.empty() && points_back(opp) && !taken.count({name(peer), opp}))
        back = opp;
      else if (points_back(d) && !taken.count({name(peer), d}))
        back = d;
      else if (pt != table.end())
        for (const std::string& pd : order.at(peer))
          if (points_back(pd) && !taken.count({name(peer), pd})) {
            back = pd;
            break;
          }
      if (back.empty()) {
        if (pt != table.end())
          for (const std::string& pd : order.at(peer))
            if (points_back(pd))
              throw ConfigError("IPCQ wiring breaks invariant I3 (one ring per sender): " + name(pe) + " direction " +
                                d + " and another direction of " + name(pe) + " would both land in " + name(peer) +
                                "'s " + pd + " ring");
        throw ConfigError("IPCQ wiring: " + name(pe) + " direction " + d + " points at " + name(peer) +
                          ", which has no direction pointing back (every queue needs both ends wired)");
      }
      taken.insert({name(peer), back});
      out[pe].push_back({d, back, peer, rx_base(pe, d), rx_base(peer, back)});
    }
  }
  return out;
}

}  // namespace kbsim::host_runtime
