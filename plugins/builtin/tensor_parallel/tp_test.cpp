// Tensor parallelism: parallel_state, the mappings and the refused
// vocabulary-parallel embedding against a mocked process group and runtime,
// and the tp-mlp bench through the command line (verified output, exact
// simulated times).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "kbsim/rt/tensor_parallel.hpp"
#include "kbsim/testing_cli.hpp"

using ::testing::HasSubstr;
using ::testing::Return;

namespace kbsim {
namespace {

class MockDistributed : public rt::Distributed {
 public:
  MOCK_METHOD(void, init_process_group, (const ccl::Config&, std::string_view), (override));
  MOCK_METHOD(bool, is_initialized, (), (const, noexcept, override));
  MOCK_METHOD(std::string_view, get_backend, (), (const, override));
  MOCK_METHOD(unsigned, get_rank, (), (const, override));
  MOCK_METHOD(unsigned, get_world_size, (), (const, override));
  MOCK_METHOD(void, all_reduce, (const rt::Tensor&, std::string_view), (override));
  MOCK_METHOD(void, barrier, (), (override));
  MOCK_METHOD(void, spawn, (const std::function<void(unsigned)>&, unsigned), (override));
  MOCK_METHOD(void, install_ipcq, (const std::vector<ccl::Wire>&, const ccl::Config&), (override));
  MOCK_METHOD(const std::vector<rt::CollectiveResult>&, collectives, (), (const, noexcept, override));
};

std::string bench_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const BenchError& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

TEST(ParallelState, TheTpGroupIsTheProcessGroup) {
  MockDistributed dist;
  EXPECT_CALL(dist, is_initialized()).WillRepeatedly(Return(true));
  EXPECT_CALL(dist, get_world_size()).WillRepeatedly(Return(2u));
  EXPECT_CALL(dist, get_rank()).WillRepeatedly(Return(1u));
  rt::tp::ParallelState state(dist);
  EXPECT_THAT(bench_error([&] { state.get_tensor_model_parallel_rank(); }),
              HasSubstr("before initialize_model_parallel"));
  EXPECT_THAT(bench_error([&] { state.initialize_model_parallel(4); }),
              HasSubstr("only a tensor-parallel size equal to the world size (2) is supported"));
  state.initialize_model_parallel(2);
  EXPECT_EQ(state.get_tensor_model_parallel_world_size(), 2u);
  EXPECT_EQ(state.get_tensor_model_parallel_rank(), 1u);
}

TEST(ParallelState, NeedsAProcessGroup) {
  MockDistributed dist;
  EXPECT_CALL(dist, is_initialized()).WillRepeatedly(Return(false));
  rt::tp::ParallelState state(dist);
  EXPECT_THAT(bench_error([&] { state.initialize_model_parallel(1); }), HasSubstr("before init_process_group"));
}

TEST(Mappings, CopyIsTheIdentityReduceIsAnAllReduceTheOthersAreNotSupported) {
  MockDistributed dist;
  const rt::Tensor x;
  EXPECT_EQ(&rt::tp::copy_to_tp_region(x), &x);
  EXPECT_CALL(dist, all_reduce(testing::Ref(x), std::string_view("sum"))).Times(1);
  EXPECT_EQ(&rt::tp::reduce_from_tp_region(dist, x), &x);
  EXPECT_THAT(bench_error([&] { rt::tp::scatter_to_tp_region(x); }), HasSubstr("not supported"));
  EXPECT_THAT(bench_error([&] { rt::tp::gather_from_tp_region(x); }), HasSubstr("not supported"));
}

/// A host runtime no call may reach: a layer that refuses must do so before it allocates anything.
class UntouchedRuntime : public rt::Runtime {
 public:
  MOCK_METHOD(rt::Tensor, empty, (const Shape&, DType, const rt::DPPolicy&, std::string), (override));
  MOCK_METHOD(rt::Tensor, zeros, (const Shape&, DType, const rt::DPPolicy&, std::string), (override));
  MOCK_METHOD(rt::Tensor, from_host, (const Shape&, DType, std::span<const double>, const rt::DPPolicy&, std::string),
              (override));
  MOCK_METHOD(void, free, (rt::Tensor&), (override));
  MOCK_METHOD(rt::TransferResult, write, (const rt::Tensor&, std::span<const std::byte>), (override));
  MOCK_METHOD(std::vector<std::byte>, read, (const rt::Tensor&, rt::TransferResult*), (override));
  MOCK_METHOD(rt::TransferResult, copy, (const rt::Tensor&, const rt::Tensor&), (override));
  MOCK_METHOD(std::string, summary, (const rt::Tensor&), (override));
  MOCK_METHOD(rt::LaunchHandle, launch, (std::string_view, std::vector<rt::Arg>, const rt::LaunchOptions&), (override));
  MOCK_METHOD(const rt::LaunchResult&, wait, (rt::LaunchHandle), (override));
  MOCK_METHOD(void, wait_all, (), (override));
  MOCK_METHOD(std::uint64_t, submitted, (), (const, noexcept, override));
  MOCK_METHOD(void, set_device, (unsigned), (override));
  MOCK_METHOD(unsigned, current_device, (), (const, override));
  MOCK_METHOD(System&, system, (), (override));
  MOCK_METHOD(Tick, now, (), (const, override));
  MOCK_METHOD(unsigned, cubes_per_sip, (), (const, override));
  MOCK_METHOD(unsigned, pes_per_cube, (), (const, override));
  MOCK_METHOD(std::vector<double>, read_slice, (const rt::Tensor&, const rt::Region&), (override));
  MOCK_METHOD(rt::TransferResult, write_slice, (const rt::Tensor&, const rt::Region&, std::span<const double>),
              (override));
  MOCK_METHOD(void, on_devices, (BenchContext&, const std::function<void(BenchContext&)>&), (override));
  MOCK_METHOD(void, open_scope, (std::vector<rt::Tensor>&), (override));
  MOCK_METHOD(void, close_scope, (std::vector<rt::Tensor>&), (override));
};

TEST(VocabParallelEmbedding, IsRefusedAsNotSupportedBeforeAnythingIsAllocated) {
  MockDistributed dist;
  EXPECT_CALL(dist, is_initialized()).WillRepeatedly(Return(true));
  EXPECT_CALL(dist, get_world_size()).WillRepeatedly(Return(2u));
  rt::tp::ParallelState state(dist);
  state.initialize_model_parallel(2);
  testing::StrictMock<UntouchedRuntime> runtime;  // any call to it fails the test
  try {
    rt::tp::VocabParallelEmbedding embedding(runtime, state, 32000, 1024);
    ADD_FAILURE() << "VocabParallelEmbedding was constructed";
  } catch (const BenchError& e) {
    EXPECT_EQ(e.reason(), "NOT_SUPPORTED");
    EXPECT_THAT(e.what(), HasSubstr("VocabParallelEmbedding(32000, 1024) is not supported"));
    EXPECT_THAT(e.what(), HasSubstr("split over the ranks by vocabulary"));
  }
}

rapidjson::Document tp_mlp(const std::string& args, testkit::CliResult* cli = nullptr) {
  const auto dir = testkit::temp_dir();
  testkit::CliResult r = testkit::run_kbsim("run --bench tp-mlp --verify-data --out " + dir.string() + " " + args);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("verified: every rank's 512 outputs"));
  if (cli) *cli = r;
  rapidjson::Document d;
  d.Parse(testkit::read_file(dir / "results.json").c_str());
  return d;
}

TEST(TpMlp, TwoRanksComputeTheMlpOnThePes) {
  rapidjson::Document d = tp_mlp("");
  ASSERT_TRUE(d.IsObject());
  const auto& m = d["metrics"];
  EXPECT_EQ(m["world_size"].GetUint64(), 2u);
  // fc1: each PE multiplies (1, 512) by its (512, 8) slice (one MAC-array cycle) behind loading both.
  EXPECT_DOUBLE_EQ(m["fc1_gemm_ns"].GetDouble(), 47.626);
  EXPECT_DOUBLE_EQ(m["fc2_partial_gemm_ns"].GetDouble(), 618.928);
  EXPECT_DOUBLE_EQ(m["forward_ns"].GetDouble(), 4018.454);
  EXPECT_STREQ(m["allreduce_algorithm"].GetString(), "lrab_hierarchical_allreduce");
}

TEST(TpMlp, FourRanksAndEveryAlgorithmAgree) {
  tp_mlp("--set system.sips.count=4");
  tp_mlp("--set ccl.algorithm=ring_allreduce");
  tp_mlp("--set ccl.algorithm=direct_allreduce");
}

TEST(TpMlp, AHiddenSizeTheRanksDoNotDivideIsAConfigError) {
  const auto dir = testkit::temp_dir();
  auto r =
      testkit::run_kbsim("run --bench tp-mlp --param D_hidden=1000 --set system.sips.count=3 --out " + dir.string());
  EXPECT_EQ(r.code, 3);
  EXPECT_THAT(r.err, HasSubstr("D_hidden"));
  EXPECT_THAT(r.err, HasSubstr("multiple of the world size 3"));
}

}  // namespace
}  // namespace kbsim
