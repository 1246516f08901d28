#include "sim/metrics/metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/config_error.h"
#include "sim/core/rng.h"
#include "sim/metrics/percentile.h"
#include "sim/metrics/quantile_sketch.h"
#include "sim/metrics/stepwise_metrics.h"

namespace servesim {
namespace {

// numpy.percentile (linear) written the slow, obvious way: the reference for both the exact
// percentiles and the sketch.
double brute_force_percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double rank = p / 100.0 * (v.size() - 1);
  const size_t below = static_cast<size_t>(rank);
  if (below + 1 >= v.size()) return v.back();
  return v[below] * (1.0 - (rank - below)) + v[below + 1] * (rank - below);
}

TEST(PercentileTest, MatchesNumpyLinearOnKnownValues) {
  // numpy.percentile([1, 2, 3, 4], q) for q = 0, 50, 90, 99, 100.
  const std::vector<double> v{4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(percentile(v, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile(v, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile(v, 90), 3.7);
  EXPECT_DOUBLE_EQ(percentile(v, 99), 3.97);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 4.0);
  EXPECT_DOUBLE_EQ(percentile({7.0}, 99), 7.0);
  EXPECT_TRUE(std::isnan(percentile({}, 50)));
}

TEST(PercentileTest, MatchesBruteForceOnRandomData) {
  Rng rng(9);
  for (int n : {2, 3, 10, 101, 1000}) {
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = rng.lognormal(0.0, 1.0);
    for (double p : {0.0, 1.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0}) {
      EXPECT_NEAR(percentile(v, p), brute_force_percentile(v, p), 1e-12) << n << " " << p;
    }
  }
}

TEST(QuantileSketchTest, WithinHalfAPercentOfBruteForce) {
  Rng rng(10);
  QuantileSketch sketch;
  std::vector<double> all;
  // A realistic ITL mix: mostly decode steps of ~20-40 ms, some long prefill stalls.
  for (int i = 0; i < 200000; ++i) {
    const double gap = rng.uniform() < 0.95 ? rng.lognormal(std::log(0.03), 0.2)
                                            : rng.lognormal(std::log(0.4), 0.8);
    sketch.add(gap);
    all.push_back(gap);
  }
  for (double p : {0.0, 10.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0}) {
    const double exact = brute_force_percentile(all, p);
    EXPECT_NEAR(sketch.quantile(p), exact, exact * QuantileSketch::kRelativeError + 1e-15)
        << "p" << p;
  }
  double sum = 0.0;
  for (double x : all) sum += x;
  EXPECT_NEAR(sketch.mean(), sum / all.size(), 1e-12);
  EXPECT_EQ(sketch.max(), *std::max_element(all.begin(), all.end()));
  EXPECT_EQ(sketch.count(), all.size());
}

TEST(QuantileSketchTest, SmallAndMergedSketchesAndZeros) {
  QuantileSketch a;
  QuantileSketch b;
  EXPECT_TRUE(std::isnan(a.quantile(50)));
  a.add(0.010);
  a.add(0.0);
  b.add(0.020);
  b.add(0.040);
  a.merge(b);
  const std::vector<double> all{0.0, 0.010, 0.020, 0.040};
  for (double p : {25.0, 50.0, 75.0, 90.0}) {
    const double exact = brute_force_percentile(all, p);
    EXPECT_NEAR(a.quantile(p), exact, exact * QuantileSketch::kRelativeError + 1e-12) << p;
  }
  EXPECT_EQ(a.quantile(0), 0.0);
  EXPECT_EQ(a.quantile(100), 0.040);
}

TEST(QuantileSketchTest, RepeatedValuesLikeADecodeBatchCountInTheRightBucket) {
  QuantileSketch sketch;
  std::vector<double> all;
  for (int step = 0; step < 100; ++step) {
    const double gap = 0.02 + 0.0005 * (step % 7);
    for (int seq = 0; seq < 64; ++seq) {
      sketch.add(gap);
      all.push_back(gap);
    }
  }
  for (double p : {5.0, 50.0, 95.0}) {
    const double exact = brute_force_percentile(all, p);
    EXPECT_NEAR(sketch.quantile(p), exact, exact * QuantileSketch::kRelativeError) << p;
  }
}

RequestRecord ok_record(uint64_t id, double arrival, double ttft, double e2e, int out) {
  RequestRecord r;
  r.id = id;
  r.arrival_s = arrival;
  r.first_scheduled_s = arrival + ttft / 2;
  r.first_token_s = arrival + ttft;
  r.finish_s = arrival + e2e;
  r.prompt_tokens = 100;
  r.output_tokens = out;
  return r;
}

TEST(RequestRecordTest, DerivedLatencies) {
  const RequestRecord r = ok_record(0, 10.0, 0.5, 2.5, 5);
  EXPECT_DOUBLE_EQ(r.queueing_s(), 0.25);
  EXPECT_DOUBLE_EQ(r.ttft_s(), 0.5);
  EXPECT_DOUBLE_EQ(r.tpot_s(), 0.5);  // (2.5 - 0.5) / (5 - 1)
  EXPECT_DOUBLE_EQ(r.e2e_s(), 2.5);
  EXPECT_TRUE(std::isnan(ok_record(0, 0, 1, 1, 1).tpot_s()));
}

TEST(MetricsCollectorTest, SummaryMatchesBruteForce) {
  MetricsOptions options;
  options.num_gpus = 2;
  options.price_per_gpu_hour = 3.6;
  options.slo.ttft_s = 0.5;
  MetricsCollector c(options);
  std::vector<double> ttfts;
  std::vector<double> tpots;
  Rng rng(12);
  for (uint64_t i = 0; i < 1000; ++i) {
    const double ttft = 0.1 + rng.uniform();
    const double e2e = ttft + 1.0 + rng.uniform();
    const RequestRecord r = ok_record(i, i * 0.1, ttft, e2e, 11);
    c.add(r);
    ttfts.push_back(ttft);
    tpots.push_back(r.tpot_s());
  }
  RequestRecord rejected;
  rejected.id = 1000;
  rejected.arrival_s = 100.0;
  rejected.status = RequestOutcome::kRejected;
  c.add(rejected);

  const MetricsSummary s = c.summary();
  EXPECT_EQ(s.requests, 1001u);
  EXPECT_EQ(s.completed, 1000u);
  EXPECT_EQ(s.rejected, 1u);
  EXPECT_DOUBLE_EQ(s.error_rate, 1.0 / 1001);
  EXPECT_EQ(s.ttft.count, 1000u);
  // Stored as floats: agreement to float precision.
  EXPECT_NEAR(s.ttft.p50_s, brute_force_percentile(ttfts, 50), 1e-6);
  EXPECT_NEAR(s.ttft.p99_s, brute_force_percentile(ttfts, 99), 1e-6);
  EXPECT_NEAR(s.tpot.p90_s, brute_force_percentile(tpots, 90), 1e-6);
  EXPECT_NEAR(s.ttft.max_s, *std::max_element(ttfts.begin(), ttfts.end()), 1e-6);
  double ttft_sum = 0.0;
  for (double x : ttfts) ttft_sum += x;
  EXPECT_NEAR(s.ttft.mean_s, ttft_sum / 1000, 1e-12);

  const int slo_met = static_cast<int>(
      std::count_if(ttfts.begin(), ttfts.end(), [](double t) { return t <= 0.5; }));
  EXPECT_DOUBLE_EQ(s.slo_attainment, slo_met / 1001.0);
  EXPECT_GT(s.duration_s, 99.9);
  EXPECT_DOUBLE_EQ(s.request_throughput, 1000 / s.duration_s);
  EXPECT_DOUBLE_EQ(s.goodput, slo_met / s.duration_s);
  EXPECT_DOUBLE_EQ(s.output_throughput, 11000 / s.duration_s);
  EXPECT_DOUBLE_EQ(s.output_throughput_per_gpu, s.output_throughput / 2);
  // $3.6 per GPU-hour = $0.001 per GPU-second.
  EXPECT_NEAR(s.cost_per_million_output_tokens, 0.001 * 2 * s.duration_s / 11000 * 1e6, 1e-9);
  EXPECT_EQ(s.itl.count, 0u);
  EXPECT_TRUE(std::isnan(s.itl.p50_s));
}

TEST(MetricsCollectorTest, WarmupByTimeAndByCountIsLeftOut) {
  MetricsOptions options;
  options.warmup_s = 5.0;
  options.warmup_requests = 3;
  MetricsCollector c(options);
  for (uint64_t i = 0; i < 10; ++i) {
    c.add(ok_record(i, static_cast<double>(i), i < 6 ? 100.0 : 1.0, 2.0 + (i < 6 ? 100 : 0), 3));
    c.add_itl(i < 6 ? 50.0 : 0.5, i, static_cast<double>(i));
  }
  const MetricsSummary s = c.summary();
  EXPECT_EQ(s.excluded_warmup, 5u);  // ids 0..4 (arrivals < 5 s, and ids < 3)
  EXPECT_EQ(s.requests, 5u);
  EXPECT_EQ(c.records_seen(), 10u);
  EXPECT_DOUBLE_EQ(s.ttft.p50_s, 1.0);  // ids 6..9 have TTFT 1; id 5 has 100
  EXPECT_EQ(s.itl.count, 5u);
  EXPECT_NEAR(s.itl.p50_s, 0.5, 0.5 * QuantileSketch::kRelativeError);
  EXPECT_DOUBLE_EQ(s.duration_s, 107.0 - 5.0);  // warmup_s to the last finish (id 5)
}

TEST(MetricsCollectorTest, RejectsBadOptions) {
  MetricsOptions bad;
  bad.num_gpus = 0;
  EXPECT_THROW(MetricsCollector{bad}, ConfigError);
  MetricsOptions negative;
  negative.warmup_s = -1;
  EXPECT_THROW(MetricsCollector{negative}, ConfigError);
  MetricsOptions slo;
  slo.slo.tpot_s = -0.1;
  EXPECT_THROW(MetricsCollector{slo}, ConfigError);
}

TEST(StepwiseMetricsTest, RoutesByStepAndDropsEachStepsWarmup) {
  StepwiseMetrics m(3, 100.0, 10.0, MetricsOptions{});
  for (int step = 0; step < 3; ++step) {
    for (int i = 0; i < 10; ++i) {
      // One request every 10 s of the step; TTFT grows with the step (more clients).
      RequestRecord r = ok_record(static_cast<uint64_t>(step * 10 + i), step * 100.0 + i * 10.0,
                                  0.1 * (step + 1), 1.0, 5);
      r.step_index = step;
      m.add(r);
      m.add_itl(0.01 * (step + 1), r.id, r.arrival_s, step);
    }
  }
  ASSERT_EQ(m.steps(), 3);
  for (int step = 0; step < 3; ++step) {
    const MetricsSummary s = m.summary(step);
    EXPECT_EQ(s.excluded_warmup, 1u) << step;  // the request at the step's first second
    EXPECT_EQ(s.completed, 9u);
    EXPECT_NEAR(s.ttft.p50_s, 0.1 * (step + 1), 1e-6);
    EXPECT_NEAR(s.itl.p99_s, 0.01 * (step + 1), 1e-12);
    EXPECT_DOUBLE_EQ(s.duration_s, 91.0 - 10.0);  // warm-up end to the last finish
  }
  RequestRecord stray = ok_record(99, 0, 1, 1, 2);
  stray.step_index = 3;
  EXPECT_THROW(m.add(stray), std::out_of_range);
  EXPECT_THROW(StepwiseMetrics(3, 100.0, 100.0, MetricsOptions{}), ConfigError);
  EXPECT_THROW(StepwiseMetrics(0, 100.0, 0.0, MetricsOptions{}), ConfigError);
}

}  // namespace
}  // namespace servesim
