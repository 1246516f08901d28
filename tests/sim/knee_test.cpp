// The knee of a stepped run and the sample-size rule behind the short-step warning, on
// synthetic per-step summaries.
#include "sim/metrics/knee.h"

#include <gtest/gtest.h>

namespace servesim {
namespace {

MetricsSummary step(double ttft_p99_s, double error_rate, uint64_t samples = 1000) {
  MetricsSummary s;
  s.requests = samples;
  s.ttft.count = s.tpot.count = s.e2e.count = samples;
  s.ttft.p99_s = ttft_p99_s;
  s.tpot.p99_s = 0.01;
  s.e2e.p99_s = 1.0;
  s.error_rate = error_rate;
  return s;
}

SloSpec ttft_slo(double limit_s) {
  SloSpec slo;
  slo.ttft_s = limit_s;
  return slo;
}

TEST(Knee, NoneWhenEveryStepMeetsTheSlosAndTheErrorLimit) {
  const Knee knee = find_knee({step(0.1, 0), step(0.4, 0.005)}, ttft_slo(0.5), 0.01);
  EXPECT_EQ(knee.step, -1);
  EXPECT_TRUE(knee.reason.empty());
  EXPECT_TRUE(knee_json(knee, {1, 2}).is_null());
}

TEST(Knee, FirstStepWhoseP99BreaksAnSlo) {
  const Knee knee = find_knee({step(0.1, 0), step(0.6, 0), step(0.9, 0)}, ttft_slo(0.5), 0.01);
  EXPECT_EQ(knee.step, 1);
  EXPECT_EQ(knee.reason, "TTFT p99 600.0 ms > SLO 500.0 ms");
  const nlohmann::json j = knee_json(knee, {1, 4, 16});
  EXPECT_EQ(j["step"], 2);  // 1-based, as the table numbers steps
  EXPECT_EQ(j["clients"], 4);
  EXPECT_EQ(j["reason"], knee.reason);
}

TEST(Knee, EachSloIsReadAsP99) {
  SloSpec tpot;
  tpot.tpot_s = 0.005;
  EXPECT_EQ(find_knee({step(0.1, 0)}, tpot, 0.01).reason, "TPOT p99 10.0 ms > SLO 5.0 ms");
  SloSpec e2e;
  e2e.e2e_s = 0.5;
  EXPECT_EQ(find_knee({step(0.1, 0)}, e2e, 0.01).reason, "E2E p99 1000.0 ms > SLO 500.0 ms");
}

TEST(Knee, ErrorRateBreaksAStepBeforeItsLatencyIsRead) {
  const Knee knee = find_knee({step(0.1, 0), step(0.9, 0.02)}, ttft_slo(0.5), 0.01);
  EXPECT_EQ(knee.step, 1);
  EXPECT_EQ(knee.reason, "error rate 2.0% > 1.0%");
  EXPECT_EQ(find_knee({step(0.1, 0.02)}, SloSpec{}, 0.01).step, 0);
  // At the limit is within it.
  EXPECT_EQ(find_knee({step(0.1, 0.01)}, SloSpec{}, 0.01).step, -1);
}

TEST(Knee, StepsWithoutCountedRequestsAreNotJudged) {
  MetricsSummary empty;
  EXPECT_EQ(find_knee({empty, step(0.1, 0)}, ttft_slo(0.5), 0.01).step, -1);
}

TEST(PercentileStability, TheLargestSampleMustBoundTheQuantile) {
  EXPECT_EQ(min_samples_for_percentile(0.50), 6u);
  EXPECT_EQ(min_samples_for_percentile(0.95), 72u);
  EXPECT_EQ(min_samples_for_percentile(0.99), 368u);
}

TEST(PercentileStability, AShortStepNamesItsUnstablePercentiles) {
  EXPECT_TRUE(unstable_percentiles(step(0.1, 0, 368)).empty());
  EXPECT_EQ(unstable_percentiles(step(0.1, 0, 367)), std::vector<int>{99});
  EXPECT_EQ(unstable_percentiles(step(0.1, 0, 71)), (std::vector<int>{95, 99}));
  EXPECT_EQ(unstable_percentiles(step(0.1, 0, 5)), (std::vector<int>{50, 95, 99}));
  EXPECT_TRUE(unstable_percentiles(MetricsSummary{}).empty());
}

TEST(PercentileStability, TheFewestOfTtftTpotAndE2eDecide) {
  MetricsSummary s = step(0.1, 0, 1000);
  s.tpot.count = 100;  // one-token answers have no TPOT
  EXPECT_EQ(unstable_percentiles(s), std::vector<int>{99});
  s.tpot.count = 0;  // no TPOT at all: TTFT and E2E decide
  EXPECT_TRUE(unstable_percentiles(s).empty());
}

}  // namespace
}  // namespace servesim
