#include "tensor_layout.hpp"

#include <algorithm>

namespace kbsim::host_runtime {

namespace {
constexpr std::uint64_t kPieceAlign = 64;

bool same_piece(const rt::ShardSpec& a, const rt::ShardSpec& b) {
  return a.offset_bytes == b.offset_bytes && a.nbytes == b.nbytes && a.shape == b.shape;
}
}  // namespace

std::vector<const rt::ShardSpec*> distinct_pieces(const std::vector<rt::ShardSpec>& shards) {
  std::vector<const rt::ShardSpec*> out;
  for (const rt::ShardSpec& s : shards)
    if (std::none_of(out.begin(), out.end(), [&](const rt::ShardSpec* p) { return same_piece(*p, s); }))
      out.push_back(&s);
  return out;
}

std::uint64_t lay_out_va(std::vector<rt::ShardSpec>& shards) {
  std::uint64_t end = 0;
  for (const rt::ShardSpec* piece : distinct_pieces(shards)) {
    const std::uint64_t at = (end + kPieceAlign - 1) / kPieceAlign * kPieceAlign;
    for (rt::ShardSpec& s : shards)
      if (same_piece(s, *piece)) s.va = at;
    end = at + piece->nbytes;
  }
  return end;
}

std::vector<kbsim::ahbm::PeRef> holders(const std::vector<rt::ShardSpec>& shards) {
  std::vector<kbsim::ahbm::PeRef> out;
  for (const rt::ShardSpec& s : shards) {
    kbsim::ahbm::PeRef pe{s.sip, s.cube, s.pe};
    if (std::find(out.begin(), out.end(), pe) == out.end()) out.push_back(pe);
  }
  return out;
}

std::vector<kbsim::ahbm::MmuEntry> mmu_entries(const std::vector<rt::ShardSpec>& shards) {
  std::vector<kbsim::ahbm::MmuEntry> out;
  const std::vector<const rt::ShardSpec*> pieces = distinct_pieces(shards);
  for (const kbsim::ahbm::PeRef& pe : holders(shards)) {
    for (const rt::ShardSpec* piece : pieces) {
      const rt::ShardSpec* best = piece;
      int best_rank = 0;  // 2 = the PE's own replica, 1 = one in its cube
      for (const rt::ShardSpec& s : shards) {
        if (!same_piece(s, *piece)) continue;
        int rank = s.cube == pe.cube ? (s.pe == pe.pe ? 2 : 1) : 0;
        if (rank > best_rank) {
          best = &s;
          best_rank = rank;
        }
      }
      out.push_back({pe, best->va, best->pa, best->nbytes});
    }
  }
  return out;
}

}  // namespace kbsim::host_runtime
