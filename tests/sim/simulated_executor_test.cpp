#include "sim/serving/simulated_executor.h"

#include <gtest/gtest.h>

namespace servesim {
namespace {

// Step time = 1 ms per token of one stage + a host overhead (0.5 ms unless given); transfers
// 0.1 ms.
class FakeCostModel final : public CostModel {
 public:
  explicit FakeCostModel(int stages, double host_s = 0.5e-3) : stages_(stages), host_s_(host_s) {}
  StepTime predict(const BatchShape& shape) const override {
    StepTime t;
    t.op_s[static_cast<size_t>(Op::kMlp)] = 1e-3 * static_cast<double>(shape.num_tokens);
    t.op_s[static_cast<size_t>(Op::kOverhead)] = host_s_;
    t.total_s = t.op_s[static_cast<size_t>(Op::kMlp)] + host_s_;
    return t;
  }
  int num_stages() const override { return stages_; }
  double stage_transfer_s(int64_t) const override { return 0.1e-3; }

 private:
  int stages_;
  double host_s_;
};

SchedulerOutput decodes(int n) {
  SchedulerOutput out;
  for (int i = 0; i < n; ++i) {
    ScheduledSequence s;
    s.request_id = static_cast<uint64_t>(i);
    s.num_new_tokens = 1;
    s.num_computed_tokens = 100;
    s.samples = true;
    out.sequences.push_back(s);
  }
  return out;
}

TEST(SimulatedExecutor, WithoutPipelineTheStepIsOnePrediction) {
  FakeCostModel cost(1);
  SimulatedExecutor executor(cost, 0);
  EXPECT_DOUBLE_EQ(executor.step_time_s(decodes(8)), 8e-3 + 0.5e-3);
}

TEST(SimulatedExecutor, PipelineMicroBatchesIncludeFillAndDrainBubbles) {
  FakeCostModel cost(2);
  SimulatedExecutor executor(cost, 0);
  // 8 decodes -> two micro-batches of 4 tokens (4 ms per stage each). Stage 0 runs mb0
  // [0,4], mb1 [4,8]; stage 1 runs mb0 [4.1,8.1], mb1 [8.1,12.1]; + 0.5 ms overhead once.
  EXPECT_NEAR(executor.step_time_s(decodes(8)), 12.1e-3 + 0.5e-3, 1e-12);
  // One sequence cannot be split: it crosses both stages alone, a full bubble.
  EXPECT_NEAR(executor.step_time_s(decodes(1)), 1e-3 + 0.1e-3 + 1e-3 + 0.5e-3, 1e-12);
}

TEST(SimulatedExecutor, MicroBatchesBalanceTokens) {
  FakeCostModel cost(2);
  SimulatedExecutor executor(cost, 0);
  SchedulerOutput out = decodes(4);
  out.sequences[0].num_new_tokens = 6;  // a prefill chunk
  out.sequences[0].is_prefill = true;
  // Tokens 6,1,1,1 -> micro-batches {6} and {1,1,1}: stage 0 [0,6] then [6,9];
  // stage 1 [6.1,12.1] then [12.1,15.1].
  EXPECT_NEAR(executor.step_time_s(out), 15.1e-3 + 0.5e-3, 1e-12);
}

TEST(SimulatedExecutor, AsynchronousSchedulingExposesOnlyTheHostWorkTheGpuDoesNotCover) {
  const size_t host = static_cast<size_t>(Op::kOverhead);
  FakeCostModel gpu_bound(1);
  SimulatedExecutor a(gpu_bound, 0);
  a.enable_async_scheduling(1);
  EXPECT_DOUBLE_EQ(a.step_time_s(decodes(8)), 8e-3);
  EXPECT_DOUBLE_EQ(a.last_step().op_s[host], 0.0);
  FakeCostModel host_bound(1, 5e-3);
  SimulatedExecutor b(host_bound, 0);
  b.enable_async_scheduling(1);
  EXPECT_NEAR(b.step_time_s(decodes(2)), 5e-3, 1e-15);
  EXPECT_NEAR(b.last_step().op_s[host], 3e-3, 1e-15);
  EXPECT_DOUBLE_EQ(b.last_step().total_s, b.step_time_s(decodes(2)));
}

// With a share of the host work held in series (engine.async_host_overlap below 1),
// that share adds to the step and only the rest hides behind the GPU.
TEST(SimulatedExecutor, AsynchronousSchedulingHidesOnlyItsOverlappingShareOfHostWork) {
  const size_t host = static_cast<size_t>(Op::kOverhead);
  FakeCostModel cost(1, 4e-3);
  SimulatedExecutor none(cost, 0), half(cost, 0);
  none.enable_async_scheduling(0);
  half.enable_async_scheduling(0.5);
  // 2 ms of GPU work, 4 ms of host work: none hides -> 6 ms, as synchronous scheduling.
  EXPECT_NEAR(none.step_time_s(decodes(2)), 6e-3, 1e-15);
  EXPECT_NEAR(none.last_step().op_s[host], 4e-3, 1e-15);
  // Half overlaps: 2 ms in series, 2 ms behind 2 ms of GPU work -> 4 ms.
  EXPECT_NEAR(half.step_time_s(decodes(2)), 4e-3, 1e-15);
  EXPECT_NEAR(half.last_step().op_s[host], 2e-3, 1e-15);
  // 1 ms of GPU work hides 1 of the 2 overlapping ms: 2 + 1 + 1 = 4 ms.
  EXPECT_NEAR(half.step_time_s(decodes(1)), 4e-3, 1e-15);
  EXPECT_NEAR(half.last_step().op_s[host], 3e-3, 1e-15);
}

}  // namespace
}  // namespace servesim
