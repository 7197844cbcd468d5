// The data pass end to end on the default AHBM system: kernels run in the
// timing pass, the op log records their commands, the executor computes the
// values, and host reads return them. References are computed here directly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "executor.hpp"
#include "kbsim/ahbm/phys_addr.hpp"
#include "kbsim/pe/kernels.hpp"
#include "kbsim/rt/distributed.hpp"
#include "kbsim/rt/runtime.hpp"
#include "kbsim/testing.hpp"
#include "kbsim/tl/verify.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

// --- kernels (arguments: tensors, in order) ---
void dot_kernel(tl::Program& tl, const tl::Args& args) {
  const tl::TensorArg &a = args.tensor(0), &b = args.tensor(1), &c = args.tensor(2);
  tl.store(c.ptr, tl.dot(tl.load(a.ptr, a.shape, a.dtype), tl.load(b.ptr, b.shape, b.dtype)));
}
void dot_exp_kernel(tl::Program& tl, const tl::Args& args) {
  const tl::TensorArg &a = args.tensor(0), &b = args.tensor(1), &c = args.tensor(2);
  tl.store(c.ptr, tl.exp(tl.dot(tl.load(a.ptr, a.shape, a.dtype), tl.load(b.ptr, b.shape, b.dtype))));
}
/// C = relu(A x B + bias), bias per column, as a composite with fused epilogues.
void composite_bias_relu_kernel(tl::Program& tl, const tl::Args& args) {
  const tl::TensorArg &a = args.tensor(0), &b = args.tensor(1), &bias = args.tensor(2), &c = args.tensor(3);
  tl::CompositeSpec s;
  s.a = tl.load(a.ptr, a.shape, a.dtype);
  s.b = tl.ref(b.ptr, b.shape, b.dtype);
  s.out_ptr = c.ptr;
  s.out_dtype = c.dtype;
  s.epilogue = {{tl::MathOp::kBias, tl::Scope::kOutputTile, 1.0, tl.load(bias.ptr, bias.shape, bias.dtype)},
                {tl::MathOp::kRelu, tl::Scope::kOutputTile, 1.0, {}}};
  tl.wait(tl.composite(s));
}

/// C = sum over K tiles of relu(partial product): a k_tile-scope epilogue, tiles of the scheduler's depth.
void composite_ktile_relu_kernel(tl::Program& tl, const tl::Args& args) {
  const tl::TensorArg &a = args.tensor(0), &b = args.tensor(1), &c = args.tensor(2);
  tl::CompositeSpec s;
  s.a = tl.ref(a.ptr, a.shape, a.dtype);
  s.b = tl.ref(b.ptr, b.shape, b.dtype);
  s.out_ptr = c.ptr;
  s.out_dtype = c.dtype;
  s.epilogue = {{tl::MathOp::kRelu, tl::Scope::kKTile, 1.0, {}}};
  tl.wait(tl.composite(s));
}
/// X = A x B, then Y = exp(X), both composites issued before waiting: the second
/// queues at the scheduler behind the first.
void async_chain_kernel(tl::Program& tl, const tl::Args& args) {
  const tl::TensorArg &a = args.tensor(0), &b = args.tensor(1), &x = args.tensor(2), &y = args.tensor(3);
  tl::CompositeSpec g;
  g.a = tl.ref(a.ptr, a.shape, a.dtype);
  g.b = tl.ref(b.ptr, b.shape, b.dtype);
  g.out_ptr = x.ptr;
  g.out_dtype = x.dtype;
  tl.composite(g);
  tl::CompositeSpec e;
  e.op = tl::CompositeSpec::Op::kMath;
  e.math_op = tl::MathOp::kExp;
  e.a = tl.ref(x.ptr, x.shape, x.dtype);
  e.out_ptr = y.ptr;
  e.out_dtype = y.dtype;
  tl.composite(e);
  tl.wait();
}
/// C = softmax(A) along rows, S = sum(A) along columns.
void softmax_sum_kernel(tl::Program& tl, const tl::Args& args) {
  const tl::TensorArg &a = args.tensor(0), &c = args.tensor(1), &sum = args.tensor(2);
  tl::Tensor x = tl.load(a.ptr, a.shape, a.dtype);
  tl.store(c.ptr, tl.softmax(x, -1));
  tl.store(sum.ptr, tl.sum(x, 0));
}
/// C = exp(A) as a tiled composite math op, A streamed from HBM.
void composite_exp_kernel(tl::Program& tl, const tl::Args& args) {
  const tl::TensorArg &a = args.tensor(0), &c = args.tensor(1);
  tl::CompositeSpec s;
  s.op = tl::CompositeSpec::Op::kMath;
  s.math_op = tl::MathOp::kExp;
  s.a = tl.ref(a.ptr, a.shape, a.dtype);
  s.out_ptr = c.ptr;
  s.out_dtype = c.dtype;
  tl.wait(tl.composite(s));
}
/// C = A x B on every PE of the launch, each with its own replicas.
void dot_local_kernel(tl::Program& tl, const tl::Args& args) {
  const auto pe = static_cast<unsigned>(tl.program_id(0)), cube = static_cast<unsigned>(tl.program_id(1));
  const tl::TensorArg &a = args.tensor(0), &b = args.tensor(1), &c = args.tensor(2);
  tl.store(c.shard(cube, pe)->ptr, tl.dot(tl.load(a.shard(cube, pe)->ptr, a.shape, a.dtype),
                                          tl.load(b.shard(cube, pe)->ptr, b.shape, b.dtype)));
}

/// 2-D DMA: a (4, 5) block of A (8, 12) at row 2, column 3, stored at row 1, column 4 of C (10, 16) as loaded, and
/// doubled (a compute result) at row 6, column 10.
void block_kernel(tl::Program& tl, const tl::Args& args) {
  const tl::TensorArg &a = args.tensor(0), &c = args.tensor(1);
  const tl::Tensor blk = tl.load(a.ptr + (2 * 12 + 3) * 2, {4, 5}, a.dtype, 12);
  tl.store(c.ptr + (1 * 16 + 4) * 2, blk, 16);
  tl.store(c.ptr + (6 * 16 + 10) * 2, blk + blk, 16);
}
/// x + x stored, freed, then x * x made in the same scratch and stored: each store keeps its own values.
void free_kernel(tl::Program& tl, const tl::Args& args) {
  const tl::TensorArg &a = args.tensor(0), &twice = args.tensor(1), &square = args.tensor(2);
  const tl::Tensor x = tl.load(a.ptr, a.shape, a.dtype);
  const tl::Tensor sum = x + x;
  tl.store(twice.ptr, sum);
  tl.free(sum);
  const tl::Tensor product = x * x;
  if (product.addr() != sum.addr()) throw tl::Error("the freed scratch was not reused");
  tl.store(square.ptr, product);
  if (args.i64(3)) tl.free(sum);  // twice: refused
}
/// A row stride below the row's columns: refused.
void bad_block_kernel(tl::Program& tl, const tl::Args& args) {
  const tl::TensorArg& a = args.tensor(0);
  tl.load(a.ptr, {4, 5}, a.dtype, 4);
}

// --- IPCQ (docs/model.md, "IPCQ"): sip0.cube0.pe0 sends east ("E") to sip0.cube1.pe0, which answers west ("W").
// A is (n,) on cube 0's PE 0; C is (4, n) split row-wise over the two cubes (rows 0-1 on cube 0, rows 2-3 on cube 1).
enum IpcqMode : std::int64_t { kPlainRecv, kCopyToHbm, kCopyToTcm, kCopyToSram, kRawSends, kCopyToAnotherPesTcm };

std::uint64_t ipcq_tcm_dst() { return ahbm::pe_tcm_addr(0, 1, 0, 1024 * 1024); }  // above pe_cpu's 1 MiB scratch
std::uint64_t ipcq_sram_dst() { return ahbm::cube_sram_addr(0, 1, 0x1000); }

/// The sender sends 2A (a compute result: its values exist only in the data pass); the receiver puts what it
/// gets in C's rows 2 (and 3), as `mode` says.
void ipcq_kernel(tl::Program& tl, const tl::Args& args) {
  const tl::TensorArg &a = args.tensor(0), &c = args.tensor(1);
  const std::int64_t mode = args.i64(2);
  const Shape& shape = a.shape;
  const DType dt = a.dtype;
  const auto cube = static_cast<unsigned>(tl.program_id(1));
  const std::uint64_t mine = c.shard(cube, 0)->ptr, row = a.shard(0, 0)->nbytes;
  if (cube == 0) {
    const tl::Tensor x = tl.load(a.ptr, shape, dt);
    const tl::Tensor doubled = x + x;
    if (mode == kRawSends) {
      tl.send("E", doubled.addr(), shape, dt, tl::Space::kTcm);  // raw TCM: the compute result where it lies
      tl.send("E", a.ptr, shape, dt, tl::Space::kHbm);           // raw HBM: loaded, then sent
    } else {
      tl.send("E", doubled);
    }
    if (mode == kCopyToSram) tl.store(mine, tl.recv("E", shape, dt));  // 2A back, sent from cube 1's SRAM
    return;
  }
  switch (mode) {
    case kPlainRecv: tl.store(mine, tl.recv("W", shape, dt)); break;
    case kCopyToHbm: tl.recv("W", shape, dt, mine, tl::Space::kHbm); break;
    case kCopyToTcm: {
      const tl::Tensor t = tl.recv("W", shape, dt, ipcq_tcm_dst(), tl::Space::kTcm);
      if (t.addr() != ipcq_tcm_dst() || t.space() != tl::Space::kTcm || !t.pinned())
        throw tl::Error("copy_to_dst into TCM did not return the copy");
      tl.store(mine, t);
      break;
    }
    case kCopyToSram:
      tl.recv("W", shape, dt, ipcq_sram_dst(), tl::Space::kSram);
      tl.store(mine, tl.load(ipcq_sram_dst(), shape, dt));  // what the SRAM holds now
      tl.send("W", ipcq_sram_dst(), shape, dt, tl::Space::kSram);
      break;
    case kRawSends:
      tl.store(mine, tl.recv("W", shape, dt));
      tl.store(mine + row, tl.recv("W", shape, dt));
      break;
    case kCopyToAnotherPesTcm: tl.recv("W", shape, dt, ahbm::pe_tcm_addr(0, 0, 0, 1024 * 1024), tl::Space::kTcm); break;
  }
}

/// kbsim's own plugins and this file's kernels, loaded once.
const testkit::Plugins& plugins() {
  static const std::unique_ptr<testkit::Plugins> loaded = [] {
    auto p = std::make_unique<testkit::Plugins>();
    PluginDescriptor here{};
    add_kernel(here, "t-dot", &dot_kernel, "C = A x B");
    add_kernel(here, "t-dot-exp", &dot_exp_kernel, "C = exp(A x B)");
    add_kernel(here, "t-composite-bias-relu", &composite_bias_relu_kernel, "C = relu(A x B + bias)");
    add_kernel(here, "t-composite-ktile-relu", &composite_ktile_relu_kernel, "C = sum of relu(K-tile products)");
    add_kernel(here, "t-async-chain", &async_chain_kernel, "X = A x B; Y = exp(X), no wait between");
    add_kernel(here, "t-softmax-sum", &softmax_sum_kernel, "C = softmax(A), S = sum(A, 0)");
    add_kernel(here, "t-composite-exp", &composite_exp_kernel, "C = exp(A), tiled");
    add_kernel(here, "t-dot-local", &dot_local_kernel, "C = A x B on every PE");
    add_kernel(here, "t-block", &block_kernel, "a block of A into C, as loaded and doubled (2-D DMA)");
    add_kernel(here, "t-bad-block", &bad_block_kernel, "a row stride below the columns");
    add_kernel(here, "t-free", &free_kernel, "x + x and x * x in the same scratch, one after the other");
    add_kernel(here, "t-ipcq", &ipcq_kernel, "cube 0's PE 0 sends 2A to cube 1's PE 0 by IPCQ");
    p->add(std::move(here), "test");
    return p;
  }();
  return *loaded;
}

/// The default system with the op log and the data pass on, as --verify-data attaches it (plugin.cpp).
struct DataSystem {
  DataSystem()
      : sys(plugins().build(plugins().load_topology(std::filesystem::path(KBSIM_SOURCE_DIR) / "topology.yaml"),
                            {.op_log = true})),
        log(*sys->op_log()),
        data(log, *sys),
        rt((sys->provide(DataPass::kServiceName, data), sys->service<rt::Runtime>())) {}
  rt::Tensor put(const Shape& shape, DType dtype, const std::vector<double>& v, const char* name) {
    return rt.from_host(shape, dtype, v, {}, name);
  }
  std::unique_ptr<System> sys;
  OpLogView& log;  ///< the system's, keeping every record
  data_pass::DataExecutor data;
  rt::Runtime& rt;  ///< the host_runtime plugin's, found through the system's services
};

/// Values in [-1, 1) on a 1/64 grid (exact in f16).
std::vector<double> values(std::size_t n, unsigned seed) {
  std::vector<double> v(n);
  std::uint32_t x = 2463534242u ^ (seed * 7919u);
  for (double& e : v) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    e = static_cast<double>(x % 128) / 64.0 - 1.0;
  }
  return v;
}

/// A x B with f32 accumulation (in order), rounded to `t` — an independent reference.
std::vector<double> matmul(const std::vector<double>& a, const std::vector<double>& b, std::size_t m, std::size_t k,
                           std::size_t n, DType t) {
  std::vector<double> c(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double acc = 0;
      for (std::size_t x = 0; x < k; ++x) acc += a[i * k + x] * b[x * n + j];
      c[i * n + j] = round_to(acc, t);
    }
  return c;
}

BytesPtr bytes(std::initializer_list<int> v) {
  auto b = std::make_shared<Bytes>();
  for (int x : v) b->push_back(static_cast<std::byte>(x));
  return b;
}
std::vector<int> ints(const BytesPtr& b) {
  std::vector<int> v;
  for (std::byte x : *b) v.push_back(static_cast<int>(x));
  return v;
}

TEST(DataStore, ReadersSeeTheNewestVersionWrittenBeforeThem) {
  data_pass::DataStore st;
  st.write(tl::Space::kHbm, 100, 10, bytes({1, 2, 3, 4}));
  st.write(tl::Space::kHbm, 102, 20, bytes({9, 9}));
  st.write(tl::Space::kHbm, 100, 20, bytes({5}));  // same time, written later: wins over the older ones
  using ::testing::ElementsAre;
  EXPECT_THAT(ints(st.read(tl::Space::kHbm, 100, 4, 5)), ElementsAre(0, 0, 0, 0));  // before any write
  EXPECT_THAT(ints(st.read(tl::Space::kHbm, 100, 4, 19)), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(ints(st.read(tl::Space::kHbm, 100, 4, 20)), ElementsAre(5, 2, 9, 9));
  EXPECT_THAT(ints(st.read(tl::Space::kHbm, 99, 3, 20)), ElementsAre(0, 5, 2));  // bytes, across versions
}

TEST(DataStore, ASnapshotIsNotChangedByLaterWrites) {
  data_pass::DataStore st;
  BytesPtr v1 = bytes({1, 2});
  st.write(tl::Space::kTcm, 64, 10, v1);
  BytesPtr snap = st.read(tl::Space::kTcm, 64, 2, 15);
  EXPECT_EQ(snap, v1);  // an exact read shares the stored version (no copy)
  st.write(tl::Space::kTcm, 64, 12, bytes({7, 7}));
  EXPECT_THAT(ints(snap), ::testing::ElementsAre(1, 2));
  EXPECT_THAT(ints(st.read(tl::Space::kTcm, 64, 2, 15)), ::testing::ElementsAre(7, 7));
  EXPECT_THAT(ints(st.read(tl::Space::kTcm, 64, 2, 11)), ::testing::ElementsAre(1, 2));
}

TEST(DataStore, TcmReadsReinterpretByDtypeAndCheckBytes) {
  data_pass::DataStore st;
  st.write(tl::Space::kTcm, 0, 1, bytes({0, 60, 0, 64}));  // f16 1.0, 2.0
  data_pass::Value v = st.read(tl::Space::kTcm, 0, Shape{2}, DType::kF16, 1);
  EXPECT_EQ(data_pass::elements(v), (std::vector<double>{1.0, 2.0}));
  EXPECT_EQ(st.read(tl::Space::kTcm, 0, Shape{1}, DType::kI32, 1).bytes->size(), 4u);  // reinterpreted
  try {
    st.read(tl::Space::kTcm, 0, Shape{4}, DType::kF16, 1);
    ADD_FAILURE() << "a size mismatch must throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("tcm 0x0 holds 4 bytes, read as (4,) f16 (8 bytes)"));
  }
}

void expect_close(rt::Runtime& rt, const rt::Tensor& t, const std::vector<double>& want) {
  auto bad = verify::first_mismatch(rt.read(t), t.dtype(), want);
  EXPECT_FALSE(bad) << verify::describe(*bad, t.shape(), t.dtype());
}

TEST(DataPass, GemmF16MatchesReference) {
  DataSystem s;
  const std::size_t m = 48, k = 80, n = 40;
  auto va = values(m * k, 1), vb = values(k * n, 2);
  auto a = s.put({48, 80}, DType::kF16, va, "A"), b = s.put({80, 40}, DType::kF16, vb, "B");
  auto c = s.rt.zeros({48, 40}, DType::kF16, {}, "C");
  s.rt.wait(s.rt.launch("t-dot", {a, b, c}));
  expect_close(s.rt, c, matmul(va, vb, m, k, n, DType::kF16));
  EXPECT_EQ(s.data.stats().gemms, 1u);
}

TEST(DataPass, A2dDmaMovesABlockOfOneMatrixIntoAnother) {
  DataSystem s;
  const std::vector<double> va = values(8 * 12, 11);
  auto a = s.put({8, 12}, DType::kF16, va, "A");
  auto c = s.rt.zeros({10, 16}, DType::kF16, {}, "C");
  s.rt.wait(s.rt.launch("t-block", {a, c}));
  std::vector<double> want(10 * 16, 0.0);
  for (std::size_t r = 0; r < 4; ++r)
    for (std::size_t k = 0; k < 5; ++k) {
      const double v = va[(2 + r) * 12 + 3 + k];
      want[(1 + r) * 16 + 4 + k] = v;
      want[(6 + r) * 16 + 10 + k] = 2 * v;
    }
  expect_close(s.rt, c, want);
}

TEST(DataPass, A2dDmaWhoseRowStrideIsBelowItsColumnsIsAKernelError) {
  DataSystem s;
  auto a = s.put({8, 12}, DType::kF16, values(8 * 12, 12), "A");
  try {
    s.rt.wait(s.rt.launch("t-bad-block", {a}));
    FAIL() << "the launch did not fail";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("the row stride 4 is less than the 5 columns of a row"));
  }
}

TEST(DataPass, ScratchAKernelFreesIsReusedAndEachResultKeepsItsValues) {
  DataSystem s;
  const std::vector<double> va = values(4 * 8, 13);
  auto a = s.put({4, 8}, DType::kF16, va, "A");
  auto twice = s.rt.zeros({4, 8}, DType::kF16, {}, "twice"), square = s.rt.zeros({4, 8}, DType::kF16, {}, "square");
  s.rt.wait(s.rt.launch("t-free", {a, twice, square, std::int64_t{0}}));
  std::vector<double> want2(va.size()), want_sq(va.size());
  for (std::size_t i = 0; i < va.size(); ++i) {
    want2[i] = 2 * va[i];
    want_sq[i] = round_to(va[i] * va[i], DType::kF16);
  }
  expect_close(s.rt, twice, want2);
  expect_close(s.rt, square, want_sq);
  try {
    s.rt.wait(s.rt.launch("t-free", {a, twice, square, std::int64_t{1}}));
    FAIL() << "a second free was taken";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("not a compute result or constant this kernel run still holds"));
  }
}

TEST(DataPass, GemmF32MatchesReference) {
  DataSystem s;
  const std::size_t m = 33, k = 70, n = 17;
  auto va = values(m * k, 3), vb = values(k * n, 4);
  for (double& v : va) v *= 1.0 + 1.0 / 4096;  // not representable in f16: f32 all the way
  auto a = s.put({33, 70}, DType::kF32, va, "A"), b = s.put({70, 17}, DType::kF32, vb, "B");
  auto c = s.rt.zeros({33, 17}, DType::kF32, {}, "C");
  s.rt.wait(s.rt.launch("t-dot", {a, b, c}));
  std::vector<double> fa(va.size());
  for (std::size_t i = 0; i < va.size(); ++i) fa[i] = round_to(va[i], DType::kF32);
  expect_close(s.rt, c, matmul(fa, vb, m, k, n, DType::kF32));
}

TEST(DataPass, CopyCarriesComputedValuesToAnotherPlacementAndOnToKernels) {
  DataSystem s;
  const std::size_t n = 16;
  auto va = values(n * n, 5), vb = values(n * n, 6);
  auto a = s.put({16, 16}, DType::kF16, va, "A"), b = s.put({16, 16}, DType::kF16, vb, "B");
  auto c = s.rt.zeros({16, 16}, DType::kF16, {}, "C");
  auto split = s.rt.empty({16, 16}, DType::kF16, {rt::Split::kRowWise, rt::Split::kColumnWise, 2, 2}, "D");
  auto again = s.rt.empty({16, 16}, DType::kF16, {}, "E");
  auto e = s.rt.zeros({16, 16}, DType::kF16, {}, "F");
  s.rt.launch("t-dot", {a, b, c});  // not waited for: the copy reads C after it, as a host read does
  const std::vector<double> ab = matmul(va, vb, n, n, n, DType::kF16);
  s.rt.copy(split, c);
  expect_close(s.rt, split, ab);
  s.rt.copy(again, split);  // back to one PE, where the next kernel reads it
  s.rt.wait(s.rt.launch("t-dot", {again, b, e}));
  expect_close(s.rt, e, matmul(ab, vb, n, n, n, DType::kF16));
}

TEST(DataPass, GemmThenExpChain) {
  DataSystem s;
  auto va = values(32 * 64, 5), vb = values(64 * 32, 6);
  for (double& v : va) v /= 8;  // keep exp in range
  auto a = s.put({32, 64}, DType::kF16, va, "A"), b = s.put({64, 32}, DType::kF16, vb, "B");
  auto c = s.rt.zeros({32, 32}, DType::kF16, {}, "C");
  s.rt.wait(s.rt.launch("t-dot-exp", {a, b, c}));
  std::vector<double> want = matmul(va, vb, 32, 64, 32, DType::kF16);
  for (double& v : want) v = round_to(std::exp(v), DType::kF16);
  expect_close(s.rt, c, want);
  EXPECT_EQ(s.data.stats().maths, 1u);
}

TEST(DataPass, CompositeGemmWithBiasAndReluEpilogues) {
  DataSystem s;
  const std::size_t m = 64, k = 128, n = 96;
  auto va = values(m * k, 7), vb = values(k * n, 8), vbias = values(n, 9);
  auto a = s.put({64, 128}, DType::kF16, va, "A"), b = s.put({128, 96}, DType::kF16, vb, "B");
  auto bias = s.put({96}, DType::kF16, vbias, "bias");
  auto c = s.rt.zeros({64, 96}, DType::kF16, {}, "C");
  s.rt.wait(s.rt.launch("t-composite-bias-relu", {a, b, bias, c}));
  std::vector<double> want(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double acc = 0;
      for (std::size_t x = 0; x < k; ++x) acc += va[i * k + x] * vb[x * n + j];
      want[i * n + j] = round_to(std::max(acc + vbias[j], 0.0), DType::kF16);
    }
  expect_close(s.rt, c, want);
  std::size_t negatives_clipped = 0;
  for (double v : want) negatives_clipped += v == 0.0;
  EXPECT_GT(negatives_clipped, 0u);  // relu did something
}

TEST(DataPass, KTileEpilogueAppliesToEachTileOfTheSchedulersDepth) {
  DataSystem s;
  const std::size_t m = 32, k = 192, n = 32, tile_k = 64;  // topology.yaml: pe_scheduler tile_k 64
  auto va = values(m * k, 16), vb = values(k * n, 17);
  auto a = s.put({32, 192}, DType::kF16, va, "A"), b = s.put({192, 32}, DType::kF16, vb, "B");
  auto c = s.rt.zeros({32, 32}, DType::kF16, {}, "C");
  s.rt.wait(s.rt.launch("t-composite-ktile-relu", {a, b, c}));
  std::vector<double> want(m * n), whole(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double acc = 0, all = 0;
      for (std::size_t k0 = 0; k0 < k; k0 += tile_k) {
        double part = 0;
        for (std::size_t x = k0; x < k0 + tile_k; ++x) part += va[i * k + x] * vb[x * n + j];
        acc += std::max(part, 0.0);
        all += part;
      }
      want[i * n + j] = round_to(acc, DType::kF16);
      whole[i * n + j] = round_to(std::max(all, 0.0), DType::kF16);
    }
  expect_close(s.rt, c, want);
  EXPECT_TRUE(verify::first_mismatch(s.rt.read(c), DType::kF16, whole));  // differs from an output_tile relu
}

TEST(DataPass, AQueuedCompositeSeesTheResultOfTheOneBeforeIt) {
  DataSystem s;
  auto va = values(64 * 64, 18), vb = values(64 * 64, 19);
  for (double& v : va) v /= 8;
  auto a = s.put({64, 64}, DType::kF16, va, "A"), b = s.put({64, 64}, DType::kF16, vb, "B");
  auto x = s.rt.zeros({64, 64}, DType::kF16, {}, "X"), y = s.rt.zeros({64, 64}, DType::kF16, {}, "Y");
  s.rt.wait(s.rt.launch("t-async-chain", {a, b, x, y}));
  std::vector<double> want = matmul(va, vb, 64, 64, 64, DType::kF16);
  expect_close(s.rt, x, want);
  for (double& v : want) v = round_to(std::exp(v), DType::kF16);
  expect_close(s.rt, y, want);  // inputs read as of the reading op's end (docs/model.md, "Memory of the data pass")
}

TEST(DataPass, SoftmaxAndReductions) {
  DataSystem s;
  const std::size_t m = 8, n = 24;
  auto va = values(m * n, 12);
  auto a = s.put({8, 24}, DType::kF16, va, "A");
  auto c = s.rt.zeros({8, 24}, DType::kF16, {}, "C");
  auto sum = s.rt.zeros({1, 24}, DType::kF16, {}, "S");
  s.rt.wait(s.rt.launch("t-softmax-sum", {a, c, sum}));
  std::vector<double> want_c(m * n), want_s(n, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    double mx = -1e9, total = 0;
    for (std::size_t j = 0; j < n; ++j) mx = std::max(mx, va[i * n + j]);
    for (std::size_t j = 0; j < n; ++j) total += std::exp(va[i * n + j] - mx);
    for (std::size_t j = 0; j < n; ++j) want_c[i * n + j] = round_to(std::exp(va[i * n + j] - mx) / total, DType::kF16);
    for (std::size_t j = 0; j < n; ++j) want_s[j] += va[i * n + j];
  }
  for (double& v : want_s) v = round_to(v, DType::kF16);
  expect_close(s.rt, c, want_c);
  expect_close(s.rt, sum, want_s);
}

TEST(DataPass, CompositeMathStreamsItsInput) {
  DataSystem s;
  auto va = values(64 * 96, 13);
  auto a = s.put({64, 96}, DType::kF16, va, "A");
  auto c = s.rt.zeros({64, 96}, DType::kF16, {}, "C");
  s.rt.wait(s.rt.launch("t-composite-exp", {a, c}));
  for (double& v : va) v = round_to(std::exp(v), DType::kF16);
  expect_close(s.rt, c, va);
}

TEST(DataPass, IdenticalGemmsOnTwoCubesRunAsOneBatch) {
  DataSystem s;
  rt::DPPolicy two_cubes;
  two_cubes.num_cubes = 2;  // replicated: each cube's PE 0 holds a copy
  auto va = values(32 * 64, 14), vb = values(64 * 32, 15);
  auto a = s.rt.from_host({32, 64}, DType::kF16, va, two_cubes, "A");
  auto b = s.rt.from_host({64, 32}, DType::kF16, vb, two_cubes, "B");
  auto c = s.rt.zeros({32, 32}, DType::kF16, two_cubes, "C");
  s.rt.wait(s.rt.launch("t-dot-local", {a, b, c}));
  expect_close(s.rt, c, matmul(va, vb, 32, 64, 32, DType::kF16));
  EXPECT_EQ(s.data.stats().gemms, 2u);
  EXPECT_EQ(s.data.stats().batches, 1u);  // same start, same shapes, disjoint addresses
  EXPECT_EQ(s.data.stats().batched, 2u);
  EXPECT_EQ(s.data.stats().shared_b, 2u);  // equal B replicas: decoded once
}

TEST(DataPass, HostWriteAfterAKernelDoesNotChangeWhatItRead) {
  DataSystem s;
  auto va = values(32 * 32, 10), vb = values(32 * 32, 11);
  auto a = s.put({32, 32}, DType::kF16, va, "A"), b = s.put({32, 32}, DType::kF16, vb, "B");
  auto c = s.rt.zeros({32, 32}, DType::kF16, {}, "C");
  s.rt.wait(s.rt.launch("t-dot", {a, b, c}));
  // Overwrite A before anything asked the data pass for C: the GEMM still sees A as of its load.
  s.rt.write(a, std::vector<std::byte>(a.nbytes()));
  expect_close(s.rt, c, matmul(va, vb, 32, 32, 32, DType::kF16));
  expect_close(s.rt, a, std::vector<double>(32 * 32, 0.0));
}

TEST(DataPass, OpLogRecordsCommandsAndTilesInStartOrder) {
  DataSystem s;
  auto a = s.put({32, 64}, DType::kF16, values(32 * 64, 1), "A");
  auto b = s.put({64, 32}, DType::kF16, values(64 * 32, 2), "B");
  auto c = s.rt.zeros({32, 32}, DType::kF16, {}, "C");
  s.rt.wait(s.rt.launch("t-dot", {a, b, c}));
  s.data.flush_all();
  auto recs = s.log.by_start();
  ASSERT_FALSE(recs.empty());
  for (std::size_t i = 1; i < recs.size(); ++i) EXPECT_LE(recs[i - 1]->t_start, recs[i]->t_start);
  std::vector<std::string> commands;
  for (const OpRecord* r : recs)
    if (r->component_id == "sip0.cube0.pe0.pe_scheduler") commands.push_back(r->name);
  EXPECT_THAT(commands, ::testing::ElementsAre("dma_read", "dma_read", "gemm_f16", "dma_write"));
  // The GEMM engine knows nothing of the log, yet its stage is recorded, exactly as long as the stage.
  auto gemm = std::find_if(recs.begin(), recs.end(), [](const OpRecord* r) { return r->name == "TileToken/GEMM"; });
  ASSERT_NE(gemm, recs.end());
  EXPECT_EQ((*gemm)->component_id, "sip0.cube0.pe0.pe_gemm");
  EXPECT_EQ((*gemm)->kind, OpKind::kUnknown);
  EXPECT_EQ((*gemm)->t_end - (*gemm)->t_start, 16 * kPsPerNs);  // 32x64x32 at 4096 MACs/ns
}

/// Every record's timing, place, name, parameters and dependencies, in start order.
std::string op_log_text(const OpLogView& log) {
  std::string out;
  for (const OpRecord* r : log.by_start()) {
    out += std::to_string(r->seq) + " " + std::to_string(r->t_start) + " " + std::to_string(r->t_end) + " " +
           std::string(r->component_id) + " " + std::string(r->kind) + " " + r->name;
    for (const OpParam& p : r->params)
      out += " " + p.key + "=" + std::visit([](const auto& v) { return kbsim::format_value(ParamValue{v}); }, p.value);
    for (std::uint64_t d : r->dependency_ids) out += " after " + std::to_string(d);
    out += "\n";
  }
  return out;
}

TEST(DataPass, OpLogIsIdenticalAcrossRuns) {
  std::string first;
  for (int run = 0; run < 2; ++run) {
    DataSystem s;
    auto a = s.put({64, 64}, DType::kF16, values(64 * 64, 1), "A");
    auto b = s.put({64, 64}, DType::kF16, values(64 * 64, 2), "B");
    auto bias = s.put({64}, DType::kF16, values(64, 3), "bias");
    auto c = s.rt.zeros({64, 64}, DType::kF16, {}, "C");
    s.rt.wait(s.rt.launch("t-composite-bias-relu", {a, b, bias, c}));
    s.data.flush_all();
    std::string text = op_log_text(s.log);
    EXPECT_THAT(text, HasSubstr(" composite_gemm "));
    if (run == 0)
      first = text;
    else
      EXPECT_EQ(text, first);
  }
}

// --- IPCQ send / recv with values ---

/// The run's CCL configuration: every shared default, with IPCQ slots of `buffer_kind`.
ccl::Config ipcq_config(const std::string& buffer_kind) {
  std::vector<ParamEntry> entries;
  for (const ParamSpec& p : ccl::default_params()) entries.push_back({p.name, p.default_value, "test"});
  for (ParamEntry& e : entries)
    if (e.name == ccl::param::kBufferKind.name) e.value = buffer_kind;
  ccl::Config c;
  c.source = "test";
  c.algorithm = "test";
  c.algorithms["test"].params = Params(std::move(entries));
  return c;
}

struct IpcqRun {
  std::vector<double> c;                  ///< C, read back
  double sender_ns = 0, receiver_ns = 0;  ///< pe_exec_ns of cube 0's and cube 1's PE 0
  Tick copy = 0, store = 0;      ///< the receiver's DMA write to the copy_to_dst destination / to C (t_end - t_start)
  std::size_t sender_reads = 0;  ///< DMA reads the sender issued
  std::vector<tl::Space> slot_spaces;  ///< where the data pass keeps each ipcq_copy's slot
};

/// One launch of t-ipcq in `mode` on a fresh system, A = `va`, slots of `buffer_kind`.
IpcqRun run_ipcq(std::int64_t mode, const std::vector<double>& va, const std::string& buffer_kind = "tcm") {
  DataSystem s;
  s.sys->service<rt::Distributed>().install_ipcq({{{0, 0, 0}, "E", {0, 1, 0}}, {{0, 1, 0}, "W", {0, 0, 0}}},
                                                 ipcq_config(buffer_kind));
  const auto n = static_cast<std::int64_t>(va.size());
  auto a = s.put({n}, DType::kF16, va, "A");
  rt::DPPolicy rows;
  rows.cube = rt::Split::kRowWise;
  rows.num_cubes = 2;
  auto c = s.rt.zeros({4, n}, DType::kF16, rows, "C");
  rt::LaunchOptions opt;
  opt.sip = 0;
  opt.grid_cubes = 2;
  opt.grid_pes = 1;
  opt.auto_dim_remap = false;  // the mode is not a dim
  const rt::LaunchResult& r = s.rt.wait(s.rt.launch("t-ipcq", {a, c, mode}, opt));
  IpcqRun out;
  out.sender_ns = r.pes.at(0).pe_exec_ns;
  out.receiver_ns = r.pes.at(1).pe_exec_ns;
  out.c = s.rt.read_values(c);
  s.data.flush_all();
  const auto to = [](const OpRecord& rec) -> std::uint64_t {
    for (const OpParam& p : rec.params)
      if (p.key == "dst_addr") return static_cast<std::uint64_t>(std::get<std::int64_t>(p.value));
    return 0;
  };
  std::uint64_t c1 = 0;  // C's shard on cube 1
  for (const rt::ShardSpec& sh : c.shards())
    if (sh.cube == 1) c1 = sh.va;
  for (const OpRecord& rec : s.log.records()) {
    if (rec.component_id == "sip0.cube0.pe0.pe_scheduler" && rec.name == "dma_read") ++out.sender_reads;
    if (rec.component_id == "sip0.cube1.pe0.pe_scheduler" && rec.name == "dma_write") {
      const std::uint64_t dst = to(rec);
      if (dst == ipcq_tcm_dst() || dst == ipcq_sram_dst() || (mode == kCopyToHbm && dst == c1))
        out.copy = rec.t_end - rec.t_start;
      if (dst == c1) out.store = rec.t_end - rec.t_start;
    }
    if (rec.name == "ipcq_copy") out.slot_spaces.push_back(dynamic_cast<const DataOp&>(*rec.data).out.space);
  }
  return out;
}

/// C as run_ipcq reads it back: `rows[i]` in row i (empty: zeros).
std::vector<double> ipcq_rows(std::size_t n, const std::vector<std::vector<double>>& rows) {
  std::vector<double> c(4 * n, 0.0);
  for (std::size_t i = 0; i < rows.size(); ++i)
    std::copy(rows[i].begin(), rows[i].end(), c.begin() + static_cast<std::ptrdiff_t>(i * n));
  return c;
}

std::vector<double> twice(std::vector<double> v) {
  for (double& x : v) x *= 2;  // exact in f16 (values on a 1/64 grid)
  return v;
}

TEST(DataPass, RecvCopyToDstIntoHbmIsARecvAndAStore) {
  const auto va = values(64, 21);
  const IpcqRun plain = run_ipcq(kPlainRecv, va), copy = run_ipcq(kCopyToHbm, va);
  EXPECT_EQ(plain.c, ipcq_rows(64, {{}, {}, twice(va)}));
  EXPECT_EQ(copy.c, plain.c);
  // The same commands: the slot's recv, then one DMA write of its 128 bytes to C.
  EXPECT_EQ(copy.copy, plain.store);
  EXPECT_EQ(copy.receiver_ns, plain.receiver_ns);
  EXPECT_EQ(copy.sender_ns, plain.sender_ns);
  EXPECT_EQ(ticks_to_ns(copy.copy), 9.0);  // the 128-byte DMA write from cube 1's PE 0 to C in its HBM
  EXPECT_EQ(copy.receiver_ns, 83.95);
}

TEST(DataPass, RecvCopyToDstIntoTcmIsOneDmaWriteOverThePesOwnTcmLink) {
  const auto va = values(64, 22);
  const IpcqRun plain = run_ipcq(kPlainRecv, va), tcm = run_ipcq(kCopyToTcm, va);
  // The copy in TCM carries the values on: the kernel stores it to C.
  EXPECT_EQ(tcm.c, ipcq_rows(64, {{}, {}, twice(va)}));
  // 128 bytes over pe_dma -> pe_tcm (512 GB/s: 0.25 ns), then the TCM's write channel (512 GB/s: 0.25 ns); the
  // acknowledgement carries no bytes.
  EXPECT_EQ(tcm.copy, ns_to_ticks(0.5));
  // Exactly that much later than a plain recv and store; the sender does not notice.
  EXPECT_EQ(tcm.store, plain.store);
  EXPECT_DOUBLE_EQ(tcm.receiver_ns - plain.receiver_ns, ticks_to_ns(tcm.copy));
  EXPECT_EQ(tcm.sender_ns, plain.sender_ns);
}

TEST(DataPass, RecvCopyToDstIntoAnotherPesTcmIsRefused) {
  try {
    run_ipcq(kCopyToAnotherPesTcm, values(64, 23));
    ADD_FAILURE() << "a copy into another PE's TCM must fail";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("tl.recv(W, (64,), f16) into tcm " + ahbm::hex(ahbm::pe_tcm_addr(0, 0, 0, 1 << 20)) + ": " +
                          ahbm::hex(ahbm::pe_tcm_addr(0, 0, 0, 1 << 20)) +
                          " (128 bytes) is not in this PE's TCM (sip0.cube1.pe0"));
  }
}

TEST(DataPass, RawAddressSendsTakeTcmInPlaceAndLoadHbmFirst) {
  const auto va = values(64, 24);
  const IpcqRun raw = run_ipcq(kRawSends, va);
  EXPECT_EQ(raw.c, ipcq_rows(64, {{}, {}, twice(va), va}));
  // The sender's DMA reads: A for the sum, then A again for the raw HBM send; the raw TCM send reads nothing.
  EXPECT_EQ(raw.sender_reads, 2u);
  EXPECT_EQ(raw.sender_ns, 8.0);
}

TEST(DataPass, ASendFromCubeSramAndARecvIntoCubeSramCarryTheirValues) {
  const auto va = values(64, 25);
  const IpcqRun sram = run_ipcq(kCopyToSram, va);
  // Row 2: what cube 1's SRAM holds after the copy; row 0: the same, sent back from the SRAM to cube 0.
  EXPECT_EQ(sram.c, ipcq_rows(64, {twice(va), {}, twice(va)}));
  EXPECT_GT(sram.copy, ns_to_ticks(0.5));   // over the NoC to the SRAM: more than the PE's own TCM
  EXPECT_EQ(sram.copy, ns_to_ticks(22.5));  // the 128-byte DMA write from cube 1's PE 0 to its cube's SRAM
}

TEST(DataPass, SlotsAreKeptInTheirBufferKindsMemory) {
  const auto va = values(64, 26);
  for (const auto& [kind, space] :
       {std::pair{"tcm", tl::Space::kTcm}, {"sram", tl::Space::kSram}, {"hbm", tl::Space::kHbm}}) {
    SCOPED_TRACE(kind);
    const IpcqRun r = run_ipcq(kPlainRecv, va, kind);
    EXPECT_EQ(r.c, ipcq_rows(64, {{}, {}, twice(va)}));
    EXPECT_THAT(r.slot_spaces, ::testing::ElementsAre(space));
  }
}

}  // namespace
}  // namespace kbsim
