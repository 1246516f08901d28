#include "serve/loadtest/prometheus_text.h"

#include <gtest/gtest.h>

#include <cmath>

#include "serve/loadtest/server_sample.h"

namespace servesim {
namespace {

constexpr const char* kText =
    "# HELP vllm:num_requests_running Number of requests running.\n"
    "# TYPE vllm:num_requests_running gauge\n"
    "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 3\n"
    "vllm:num_requests_running{engine=\"1\",model_name=\"m\"} 2.0\n"
    "vllm:num_requests_waiting{model_name=\"m\"} 4 1700000000000\n"
    "vllm:kv_cache_usage_perc 0.25\n"
    "vllm:e2e_request_latency_seconds_bucket{le=\"0.3\"} 1\n"
    "vllm:e2e_request_latency_seconds_sum 2.5\n"
    "process_max_fds +Inf\n"
    "garbage line\n"
    "bad}name{x=\"1\"} 1\n"
    "9lives 1\n"
    "\n";

TEST(PrometheusText, ReadsSamplesSkipsCommentsBucketsAndJunk) {
  const PromScrape s = parse_prometheus_text(kText);
  ASSERT_EQ(s.samples.size(), 6u);
  EXPECT_EQ(s.samples[0].name, "vllm:num_requests_running");
  EXPECT_EQ(s.samples[0].labels, "engine=\"0\",model_name=\"m\"");
  EXPECT_EQ(s.samples[2].value, 4);  // the timestamp is dropped
  EXPECT_TRUE(std::isinf(s.samples[5].value));
  EXPECT_EQ(s.skipped, 3u);  // the garbage line and the two names that are not metric names
  double sum = 0;
  EXPECT_TRUE(prom_sum(s.samples, "vllm:num_requests_running", sum));
  EXPECT_EQ(sum, 5);
  EXPECT_FALSE(prom_sum(s.samples, "nothing", sum));
}

TEST(ServerSample, VllmGaugesBecomeATimeSample) {
  ServerSample sample;
  ASSERT_TRUE(server_sample(parse_prometheus_text(kText).samples, sample));
  const TimeSample t = to_time_sample(sample, 2.5);
  EXPECT_EQ(t.time_s, 2.5);
  EXPECT_EQ(t.running, 5);
  EXPECT_EQ(t.waiting, 4);
  EXPECT_DOUBLE_EQ(t.kv_usage, 0.25);
  EXPECT_FALSE(server_sample(parse_prometheus_text("other_metric 1\n").samples, sample));
}

// Found by fuzz_prometheus_text: NaN, infinite or negative gauges went into the time series
// as whatever std::lround made of them, and huge ones wrapped. A gauge like that counts as not
// exposed now, and counts beyond INT_MAX are capped.
TEST(ServerSample, NonsenseGaugesCountAsNotExposed) {
  ServerSample sample;
  EXPECT_FALSE(
      server_sample(parse_prometheus_text("vllm:num_requests_running NaN\n").samples, sample));
  EXPECT_FALSE(
      server_sample(parse_prometheus_text("vllm:num_requests_running -2\n").samples, sample));
  ASSERT_TRUE(server_sample(parse_prometheus_text("vllm:num_requests_running 3\n"
                                                  "vllm:num_requests_waiting +Inf\n"
                                                  "vllm:kv_cache_usage_perc -Inf\n"
                                                  "vllm:num_preemptions_total -4\n")
                                .samples,
                            sample));
  EXPECT_EQ(sample.running, 3);
  EXPECT_EQ(sample.waiting, 0);
  EXPECT_EQ(sample.kv_usage, 0);
  EXPECT_EQ(sample.preemptions, 0);
  ASSERT_TRUE(server_sample(parse_prometheus_text("vllm:num_requests_running 1e300\n"
                                                  "vllm:num_requests_waiting 3e9\n")
                                .samples,
                            sample));
  const TimeSample t = to_time_sample(sample, 2.0);
  EXPECT_EQ(t.running, 2147483647);
  EXPECT_EQ(t.waiting, 2147483647);
}

}  // namespace
}  // namespace servesim
