#include "data_store.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "kbsim/ahbm/phys_addr.hpp"

namespace kbsim::data_pass {

using kbsim::ahbm::hex;

void DataStore::write(tl::Space s, std::uint64_t addr, Tick t, BytesPtr bytes) {
  Space& sp = spaces_[index(s)];
  sp.longest = std::max<std::uint64_t>(sp.longest, bytes->size());
  bytes_ += bytes->size();
  ++versions_;
  std::vector<Version>& v = sp.slots[addr];
  Version ver{t, seq_++, std::move(bytes)};
  // Versions usually arrive in time order; keep (t, seq) order when they do not.
  auto at = std::upper_bound(v.begin(), v.end(), t, [](Tick x, const Version& e) { return x < e.t; });
  v.insert(at, std::move(ver));
}

BytesPtr DataStore::read(tl::Space s, std::uint64_t addr, std::uint64_t nbytes, Tick t) const {
  const Space& sp = *space(s);
  // Every version written by `t` that overlaps [addr, addr + nbytes).
  std::vector<std::pair<const Version*, std::uint64_t>> hits;  // version, its address
  const std::uint64_t end = addr + nbytes, from = addr > sp.longest ? addr - sp.longest : 0;
  for (auto it = sp.slots.lower_bound(from); it != sp.slots.end() && it->first < end; ++it)
    for (const Version& v : it->second) {
      if (v.t > t) break;
      if (it->first + v.bytes->size() > addr) hits.push_back({&v, it->first});
    }
  std::sort(hits.begin(), hits.end(), [](const auto& a, const auto& b) {
    return a.first->t != b.first->t ? a.first->t < b.first->t : a.first->seq < b.first->seq;
  });
  // Start from the newest version that covers the whole range; paint the newer ones over it.
  std::size_t base = hits.size();
  for (std::size_t i = hits.size(); i-- > 0;)
    if (hits[i].second <= addr && hits[i].second + hits[i].first->bytes->size() >= end) {
      base = i;
      break;
    }
  if (base + 1 == hits.size() && hits[base].second == addr && hits[base].first->bytes->size() == nbytes)
    return hits[base].first->bytes;
  auto out = std::make_shared<Bytes>(nbytes);
  for (std::size_t i = base == hits.size() ? 0 : base; i < hits.size(); ++i) {
    const auto& [v, at] = hits[i];
    const std::uint64_t lo = std::max(at, addr), hi = std::min<std::uint64_t>(at + v->bytes->size(), end);
    std::memcpy(out->data() + (lo - addr), v->bytes->data() + (lo - at), hi - lo);
  }
  return out;
}

Value DataStore::read(tl::Space s, std::uint64_t addr, const Shape& shape, DType dtype, Tick t) const {
  const std::uint64_t n = static_cast<std::uint64_t>(shape.elements()) * dtype_size(dtype);
  if (s == tl::Space::kTcm) {
    const Space& sp = *space(s);
    auto it = sp.slots.find(addr);
    const Version* v = nullptr;
    if (it != sp.slots.end())
      for (const Version& e : it->second)
        if (e.t <= t) v = &e;
    if (!v)
      throw std::invalid_argument("no value at tcm " + hex(addr) + " for " + shape.str() + " " +
                                  std::string(dtype_name(dtype)));
    if (v->bytes->size() != n)
      throw std::invalid_argument("tcm " + hex(addr) + " holds " + std::to_string(v->bytes->size()) +
                                  " bytes, read as " + shape.str() + " " + std::string(dtype_name(dtype)) + " (" +
                                  std::to_string(n) + " bytes)");
    return {v->bytes, shape, dtype};
  }
  return {read(s, addr, n, t), shape, dtype};
}

}  // namespace kbsim::data_pass
