#include "executor.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "kbsim/text.hpp"

namespace kbsim::data_pass {

namespace {

/// The PE model's payload of a record, or nullptr (a timeline-only record).
const DataOp* op_of(const OpRecord& r) { return dynamic_cast<const DataOp*>(r.data.get()); }

int rank(std::string_view k) noexcept {
  return k == OpKind::kMemory ? 0 : k == OpKind::kGemm ? 1 : k == OpKind::kMath ? 2 : 3;
}

/// One address range an op reads or writes.
struct Range {
  tl::Space space;
  std::uint64_t lo, hi;
  bool overlaps(const Range& o) const noexcept { return space == o.space && lo < o.hi && o.lo < hi; }
};
std::vector<Range> reads(const DataOp& op) {
  std::vector<Range> r;
  for (const OpTensor& t : op.in)
    if (!t.value) r.push_back({memory_of(t.space), t.addr, t.addr + t.span_bytes()});
  return r;
}
Range writes(const DataOp& op) { return {memory_of(op.out.space), op.out.addr, op.out.addr + op.out.span_bytes()}; }

/// RAW, WAR or WAW between two ops.
bool conflict(const DataOp& a, const DataOp& b) {
  const Range wa = writes(a), wb = writes(b);
  if (wa.overlaps(wb)) return true;
  for (const Range& r : reads(a))
    if (r.overlaps(wb)) return true;
  for (const Range& r : reads(b))
    if (r.overlaps(wa)) return true;
  return false;
}

/// GEMMs that may share a batch: same operand shapes and types, same epilogue.
bool same_signature(const DataOp& a, const DataOp& b) {
  auto same_tensor = [](const OpTensor& x, const OpTensor& y) { return x.shape == y.shape && x.dtype == y.dtype; };
  if (a.kind != DataOp::Kind::kGemm || b.kind != DataOp::Kind::kGemm || a.in.size() != b.in.size() ||
      a.tile_k != b.tile_k || a.epilogue.size() != b.epilogue.size() || !same_tensor(a.out, b.out))
    return false;
  for (std::size_t i = 0; i < a.in.size(); ++i)
    if (!same_tensor(a.in[i], b.in[i])) return false;
  for (std::size_t i = 0; i < a.epilogue.size(); ++i) {
    const auto &x = a.epilogue[i], &y = b.epilogue[i];
    if (x.op != y.op || x.scope != y.scope || x.factor != y.factor || x.operand != y.operand) return false;
  }
  return true;
}

/// `v` with its last two dimensions swapped, the bytes rearranged to match.
Value transposed(const Value& v) {
  const std::size_t r = v.shape.rank(), size = dtype_size(v.dtype);
  const auto rows = static_cast<std::size_t>(v.shape[r - 2]), cols = static_cast<std::size_t>(v.shape[r - 1]);
  const std::size_t batch = rows && cols ? static_cast<std::size_t>(v.shape.elements()) / (rows * cols) : 0;
  auto out = std::make_shared<Bytes>(v.bytes->size());
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j)
        std::memcpy(out->data() + ((b * cols + j) * rows + i) * size,
                    v.bytes->data() + ((b * rows + i) * cols + j) * size, size);
  Shape s = v.shape;
  std::swap(s[r - 1], s[r - 2]);
  return {std::move(out), s, v.dtype};
}

bool same_bytes(const BytesPtr& a, const BytesPtr& b) {
  return a == b || (a->size() == b->size() && std::memcmp(a->data(), b->data(), a->size()) == 0);
}

[[noreturn]] void fail(const OpRecord& r, const std::string& what) {
  throw SimError("data pass: " + r.name + " serviced by " + std::string(r.component_id) +
                 " at t=" + format_ns(ticks_to_ns(r.t_start)) + " ns: " + what);
}

/// f(), with an op that cannot be computed reported as a SimError naming record `r`.
template <class F>
auto guarded(const OpRecord& r, F&& f) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    fail(r, e.what());
  }
}

}  // namespace

void DataExecutor::host_write(std::string_view node, std::uint64_t pa, BytesPtr bytes, Tick t_start, Tick t_end) {
  auto op = std::make_shared<DataOp>();
  op->kind = DataOp::Kind::kCopy;
  const Shape shape{static_cast<std::int64_t>(bytes->size())};
  op->in.push_back({tl::Space::kHbm, 0, shape, DType::kU8, kNever, bytes});
  op->out = {tl::Space::kHbm, pa, shape, DType::kU8, kNever, nullptr};
  OpRecord r;
  r.t_start = t_start;
  r.t_end = t_end;
  r.component = sys_.find_node(node);
  r.component_id = sys_.node_id(r.component);
  r.kind = OpKind::kMemory;
  r.name = "host_write";
  r.param("dst_addr", pa);
  r.param("nbytes", bytes->size());
  r.data = std::move(op);
  log_.record(std::move(r));
}

void DataExecutor::run(bool all) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<OpRecord>& recs = log_.records();
  done_.resize(recs.size(), false);
  const Tick mark = all ? kNever : log_.watermark();
  std::vector<const OpRecord*> ready;
  for (std::size_t i = first_open_; i < recs.size(); ++i)
    if (!done_[i] && (all || recs[i].t_start < mark)) {
      ready.push_back(&recs[i]);
      done_[i] = true;
    }
  while (first_open_ < recs.size() && done_[first_open_]) ++first_open_;
  std::sort(ready.begin(), ready.end(), [](const OpRecord* a, const OpRecord* b) {
    if (a->t_start != b->t_start) return a->t_start < b->t_start;
    if (rank(a->kind) != rank(b->kind)) return rank(a->kind) < rank(b->kind);
    return a->seq < b->seq;
  });
  std::vector<const OpRecord*> group;
  for (std::size_t i = 0; i < ready.size(); ++i) {
    group.push_back(ready[i]);
    if (i + 1 == ready.size() || ready[i + 1]->t_start != ready[i]->t_start) {
      run_group(group);
      group.clear();
    }
  }
  stats_.wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// In order; consecutive GEMMs of one signature that conflict with none of the
// batch (and do not name a batch member as an explicit dependency) join it.
void DataExecutor::run_group(std::vector<const OpRecord*>& group) {
  std::vector<const OpRecord*> batch;
  for (const OpRecord* r : group) {
    if (!op_of(*r) || op_of(*r)->kind != DataOp::Kind::kGemm) {
      run_batch(batch);
      execute(*r);
      continue;
    }
    bool joins = !batch.empty() && same_signature(*op_of(*batch.front()), *op_of(*r));
    for (std::size_t k = 0; joins && k < batch.size(); ++k) {
      const auto& deps = r->dependency_ids;
      joins =
          !conflict(*op_of(*batch[k]), *op_of(*r)) && std::find(deps.begin(), deps.end(), batch[k]->seq) == deps.end();
    }
    if (!joins) run_batch(batch);
    batch.push_back(r);
  }
  run_batch(batch);
}

void DataExecutor::run_batch(std::vector<const OpRecord*>& batch) {
  if (batch.empty()) return;
  std::vector<std::vector<Value>> ins;
  for (const OpRecord* r : batch) ins.push_back(guarded(*r, [&] { return inputs(*r); }));
  // Members that multiply by the same B and epilogue operands on built-in engines share their decoding
  // (gemm_stacked); each A still gets its own product, so results equal unbatched ones bit for bit.
  bool shared = batch.size() > 1;
  for (std::size_t k = 0; shared && k < batch.size(); ++k) {
    shared = !custom(*op_of(*batch[k]));
    for (std::size_t i = 1; shared && i < ins[k].size(); ++i) shared = same_bytes(ins[k][i].bytes, ins[0][i].bytes);
  }
  if (batch.size() > 1) {
    ++stats_.batches;
    stats_.batched += batch.size();
  }
  if (shared) {
    const DataOp& first = *op_of(*batch.front());
    std::vector<Value> as;
    for (const auto& in : ins) as.push_back(in[0]);
    const std::vector<Value> outs = guarded(*batch.front(), [&] {
      return gemm_stacked(as, ins[0][1], first.out.dtype, first.epilogue, ins[0], first.tile_k, nullptr);
    });
    for (std::size_t k = 0; k < batch.size(); ++k) write(*batch[k], outs[k]);
    stats_.shared_b += batch.size();
    stats_.gemms += batch.size();
    stats_.executed += batch.size();
  } else {
    for (std::size_t k = 0; k < batch.size(); ++k) guarded(*batch[k], [&] { compute(*batch[k], ins[k]); });
  }
  batch.clear();
}

const DataCompute* DataExecutor::custom(const DataOp& op) {
  if (op.engine == ~NodeIndex{0}) return nullptr;
  auto [it, fresh] = engines_.try_emplace(op.engine, nullptr);
  if (fresh) it->second = dynamic_cast<const DataCompute*>(&sys_.component(op.engine));
  return it->second;
}

Value DataExecutor::resolve(const OpTensor& t, Tick reader) const {
  Shape stored = t.shape;
  if (t.transposed) std::swap(stored[stored.rank() - 1], stored[stored.rank() - 2]);
  const Tick as_of = t.as_of == kNever ? reader : t.as_of;
  Value v;
  if (t.value) {
    v = Value{t.value, stored, t.dtype};
  } else if (t.row_stride != 0) {  // a 2-D block: its rows, packed
    const std::uint64_t row = static_cast<std::uint64_t>(stored.cols()) * dtype_size(t.dtype);
    auto bytes = std::make_shared<Bytes>();
    bytes->reserve(row * static_cast<std::uint64_t>(stored.rows()));
    for (std::int64_t r = 0; r < stored.rows(); ++r) {
      const BytesPtr part = store_.read(t.space, t.addr + static_cast<std::uint64_t>(r) * t.row_stride, row, as_of);
      bytes->insert(bytes->end(), part->begin(), part->end());
    }
    v = Value{std::move(bytes), stored, t.dtype};
  } else {
    v = store_.read(t.space, t.addr, stored, t.dtype, as_of);
  }
  return t.transposed ? transposed(v) : v;
}

void DataExecutor::write(const OpRecord& r, const Value& v) {
  const DataOp& op = *op_of(r);
  // Known bytes are visible at issue; computed ones once the op ends.
  const bool known = op.kind == DataOp::Kind::kCopy && op.in.front().value;
  const Tick t = known ? r.t_start : r.t_end;
  if (op.out.row_stride == 0) {
    store_.write(op.out.space, op.out.addr, t, v.bytes);
    return;
  }
  const std::uint64_t row = static_cast<std::uint64_t>(op.out.shape.cols()) * dtype_size(op.out.dtype);
  for (std::int64_t k = 0; k < op.out.shape.rows(); ++k) {  // a 2-D block: row by row
    const auto first = v.bytes->begin() + static_cast<std::ptrdiff_t>(static_cast<std::uint64_t>(k) * row);
    store_.write(op.out.space, op.out.addr + static_cast<std::uint64_t>(k) * op.out.row_stride, t,
                 std::make_shared<const Bytes>(first, first + static_cast<std::ptrdiff_t>(row)));
  }
}

std::vector<Value> DataExecutor::inputs(const OpRecord& r) const {
  std::vector<Value> in;
  in.reserve(op_of(r)->in.size());
  for (const OpTensor& t : op_of(r)->in) in.push_back(resolve(t, r.t_end));
  return in;
}

void DataExecutor::execute(const OpRecord& r) {
  if (!op_of(r) || r.kind == OpKind::kUnknown) {
    ++stats_.skipped;
    return;
  }
  guarded(r, [&] { compute(r, inputs(r)); });
}

void DataExecutor::compute(const OpRecord& r, const std::vector<Value>& in) {
  const DataOp& op = *op_of(r);
  switch (op.kind) {
    case DataOp::Kind::kCopy:
      if (in.front().nbytes() != op.out.nbytes())
        fail(r, "copies " + std::to_string(in.front().nbytes()) + " bytes into " + std::to_string(op.out.nbytes()));
      write(r, in.front());
      ++stats_.copies;
      break;
    case DataOp::Kind::kGemm:
      write(r, gemm(in.at(0), in.at(1), op.out.dtype, op.epilogue, in, op.tile_k, custom(op)));
      ++stats_.gemms;
      break;
    case DataOp::Kind::kMath:
      write(r, math(op.op, in, op.axis, op.out.shape, op.out.dtype));
      ++stats_.maths;
      break;
  }
  ++stats_.executed;
}

}  // namespace kbsim::data_pass
