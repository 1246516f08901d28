// prefill_demand: the request rate a measured run's own numbers give, and the GPU time its
// prefills needed at the least — a published closed-loop row that asks more than the GPU's
// peak is told from one that does not.
#include "calibration/serving/prefill_demand.h"

#include <gtest/gtest.h>

#include "calibration_test_util.h"

namespace servesim {
namespace {

// Llama-3.1-8B with fp8 weights on one H200.
SimulationConfig llama_8b_on_h200() {
  return testing::scenario_of({{"model", "Llama-3.1-8B"},
                               {"gpu", "H200"},
                               {"engine", {{"dtype", "fp8"}, {"max_model_len", 10000}}}});
}

// A published row: `clients` closed-loop clients, fixed lengths, TTFT and TPOT means.
MeasuredRun row(int clients, int isl, int osl, double ttft_s, double tpot_s) {
  MeasuredRun run;
  run.source = "rows.csv:2";
  run.format = "published";
  run.load.max_concurrency = clients;
  run.prompt_tokens_per_request = isl;
  run.output_tokens_per_request = osl;
  run.summary.ttft.mean_s = ttft_s;
  run.summary.tpot.mean_s = tpot_s;
  return run;
}

TEST(PrefillDemand, AClosedLoopsMeansGiveItsRate) {
  // 64 clients whose 8,000-token prompts come back every 80 ms + 99 x 5 ms.
  const std::optional<PrefillDemand> d =
      prefill_demand(row(64, 8000, 100, 0.080, 0.005), llama_8b_on_h200());
  ASSERT_TRUE(d);
  EXPECT_NEAR(d->requests_per_s, 64 / (0.080 + 99 * 0.005), 1e-9);
  // No faster than the linear layers' 2 x 7e9 FLOPs a token at the fp8 peak (1,979 TFLOP/s);
  // attention at the bf16 peak adds a fraction of that.
  EXPECT_GT(d->prefill_at_peak_s, 2 * 7.0e9 * 8000 / 1.979e15);
  EXPECT_LT(d->prefill_at_peak_s, 0.12);
  EXPECT_NEAR(d->busy, d->requests_per_s * d->prefill_at_peak_s, 1e-12);
  EXPECT_GT(d->busy, 5) << "far beyond one GPU";
}

TEST(PrefillDemand, ALongCycleAsksLittle) {
  const std::optional<PrefillDemand> d =
      prefill_demand(row(2, 8000, 2000, 0.300, 0.008), llama_8b_on_h200());
  ASSERT_TRUE(d);
  EXPECT_LT(d->busy, 0.1);
}

TEST(PrefillDemand, AReportedRateIsTakenAsIs) {
  MeasuredRun run = row(64, 8000, 100, 0.080, 0.005);
  run.summary.request_throughput = 2.0;
  EXPECT_DOUBLE_EQ(prefill_demand(run, llama_8b_on_h200())->requests_per_s, 2.0);
}

TEST(PrefillDemand, NothingToSayWithoutALengthOrARate) {
  MeasuredRun no_length = row(64, 8000, 100, 0.080, 0.005);
  no_length.prompt_tokens_per_request = MeasuredRequest::kNone;
  EXPECT_FALSE(prefill_demand(no_length, llama_8b_on_h200()));
  MeasuredRun open = row(64, 8000, 100, 0.080, 0.005);
  open.load.request_rate_per_s = 4;  // an open loop: its clients do not fix its rate
  EXPECT_FALSE(prefill_demand(open, llama_8b_on_h200()));
  MeasuredRun no_tpot = row(64, 8000, 100, 0.080, MeasuredRequest::kNone);
  EXPECT_FALSE(prefill_demand(no_tpot, llama_8b_on_h200()));
}

}  // namespace
}  // namespace servesim
