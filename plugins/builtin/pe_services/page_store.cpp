#include "page_store.hpp"

#include <algorithm>
#include <cstring>

namespace kbsim::pe_services {

void PageStore::write(std::uint64_t pa, std::span<const std::byte> data) {
  while (!data.empty()) {
    std::uint64_t page = pa / kPageBytes, off = pa % kPageBytes;
    std::size_t n = std::min<std::size_t>(data.size(), kPageBytes - off);
    auto& slot = pages_[page];
    if (!slot) slot = std::make_unique<Page>(Page{});
    std::memcpy(slot->data() + off, data.data(), n);
    data = data.subspan(n);
    pa += n;
  }
}

void PageStore::read(std::uint64_t pa, std::span<std::byte> out) const {
  while (!out.empty()) {
    std::uint64_t page = pa / kPageBytes, off = pa % kPageBytes;
    std::size_t n = std::min<std::size_t>(out.size(), kPageBytes - off);
    auto it = pages_.find(page);
    if (it == pages_.end())
      std::memset(out.data(), 0, n);
    else
      std::memcpy(out.data(), it->second->data() + off, n);
    out = out.subspan(n);
    pa += n;
  }
}

}  // namespace kbsim::pe_services
