// What PE_CPU tells the data pass about a command (docs/model.md,
// "The two-pass data model"): where each operand is found and where the result
// goes, as a kbsim::DataOp that the command carries and the op log records.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kbsim/ahbm/host_command.hpp"
#include "kbsim/ahbm/phys_addr.hpp"
#include "kbsim/pe/data_op.hpp"

namespace pe_cpu {

namespace tl = kbsim::tl;

class DataOps {
 public:
  /// Virtual addresses translate through `mmu` (none: they are physical).
  explicit DataOps(const kbsim::ahbm::Translator* mmu) : mmu_(mmu) {}

  static std::shared_ptr<kbsim::DataOp> make(kbsim::DataOp::Kind kind, kbsim::OpTensor out,
                                             std::vector<kbsim::OpTensor> in = {}) {
    auto op = std::make_shared<kbsim::DataOp>();
    op->kind = kind;
    op->out = std::move(out);
    op->in = std::move(in);
    return op;
  }

  /// The physical address of [va, va + nbytes), which must be contiguous.
  std::uint64_t physical(std::uint64_t va, std::uint64_t nbytes, const std::string& call) const {
    if (!mmu_) return va;
    if (auto pa = kbsim::ahbm::physical_range(*mmu_, va, nbytes)) return *pa;
    throw tl::Error(call + ": " + kbsim::ahbm::hex(va) + " is not contiguous in physical memory for " +
                    std::to_string(nbytes) + " bytes");
  }

  /// Where the data pass finds `t`: a compute result in TCM, a received slot in
  /// its buffer kind's memory, a constant's bytes, or HBM (as of its load, for a
  /// loaded tensor).
  kbsim::OpTensor operand(const tl::Tensor& t, const std::string& call) const {
    const tl::Tensor::Desc& d = t.desc();
    kbsim::OpTensor o{tl::Space::kHbm, 0, d.shape, d.dtype, kbsim::kNever, nullptr, d.transposed};
    if (d.pending) {
      // A received slot: as of its recv, where its buffer kind keeps it (else a compute result in TCM, read at the
      // reader's end).
      const bool slot = d.loaded_at != kbsim::kNever;
      o.space = slot ? d.loaded_space : tl::Space::kTcm;
      o.addr = slot ? d.loaded_pa : d.addr;
      o.as_of = d.loaded_at;
    } else if (d.loaded_at != kbsim::kNever) {
      o.space = d.loaded_space;
      o.addr = d.loaded_pa;
      o.as_of = d.loaded_at;
      o.row_stride = d.loaded_row_stride;
    } else if (d.space == tl::Space::kTcm) {
      o.space = tl::Space::kTcm;
      o.addr = d.addr;
      o.value = d.data;
    } else {
      o.addr = physical(d.addr, t.nbytes(), call);
    }
    return o;
  }

  /// A result written to the HBM behind virtual address `ptr`.
  kbsim::OpTensor to_hbm(std::uint64_t ptr, const kbsim::Shape& shape, kbsim::DType dtype,
                         const std::string& call) const {
    const auto nbytes = static_cast<std::uint64_t>(shape.elements()) * kbsim::dtype_size(dtype);
    return {tl::Space::kHbm, physical(ptr, nbytes, call), shape, dtype, kbsim::kNever, nullptr, false};
  }
  /// The pending result `out` in TCM scratch.
  static kbsim::OpTensor to_tcm(const tl::Tensor& out) {
    return {tl::Space::kTcm, out.addr(), out.shape(), out.dtype(), kbsim::kNever, nullptr, false};
  }

 private:
  const kbsim::ahbm::Translator* mmu_;
};

}  // namespace pe_cpu
