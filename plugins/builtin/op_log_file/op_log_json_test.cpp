// The op-log file's JSON: records in start order (ties in completion order), times in ns, parameters and
// dependencies as written.
#include "op_log_json.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace kbsim::op_log_file {
namespace {

class TwoRecords final : public OpLogView {
 public:
  TwoRecords() {
    OpRecord late;
    late.seq = 0;
    late.t_start = 3 * kPsPerNs;
    late.t_end = 5 * kPsPerNs;
    late.component_id = "sip0.pe0";
    late.kind = "memory";
    late.name = "dma_read";
    late.param("bytes", 64);
    late.dependency_ids = {1};
    OpRecord early;
    early.seq = 1;
    early.t_start = 1 * kPsPerNs;
    early.t_end = 2 * kPsPerNs + kPsPerNs / 2;
    early.component_id = "sip0.pe1";
    early.name = "gemm_f16";
    early.param("tile", "A");
    records_ = {late, early};
  }
  const std::vector<OpRecord>& records() const noexcept override { return records_; }
  std::vector<const OpRecord*> by_start() const override { return {&records_[1], &records_[0]}; }
  Tick watermark() const noexcept override { return kNever; }
  void record(OpRecord r) override { records_.push_back(std::move(r)); }

 private:
  std::vector<OpRecord> records_;
};

TEST(OpLogJson, RecordsInStartOrderWithTheirFields) {
  TwoRecords log;
  const std::string text = json::write_json_string([&](json::JsonWriter& w) { write_op_log(w, log); });
  const auto first = text.find("\"gemm_f16\""), second = text.find("\"dma_read\"");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(second, std::string::npos);
  EXPECT_LT(first, second);
  EXPECT_THAT(text, ::testing::HasSubstr("\"t_end\": 2.5"));
  EXPECT_THAT(text, ::testing::HasSubstr("\"op_kind\": \"memory\""));
  EXPECT_THAT(text, ::testing::HasSubstr("\"tile\": \"A\""));
  EXPECT_THAT(text, ::testing::HasSubstr("\"bytes\": 64"));
  EXPECT_THAT(text, ::testing::HasSubstr("\"dependency_ids\": [\n"));
}

}  // namespace
}  // namespace kbsim::op_log_file
