#include "serve/server/serve_metrics.h"

#include <gtest/gtest.h>

namespace servesim {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(PromHistogram, BucketsAreCumulativeWithInf) {
  PromHistogram h({0.1, 1.0});
  h.observe(0.05);
  h.observe(0.1);  // le is inclusive
  h.observe(5);
  std::string out = "\n";
  h.render(out, "x", "a=\"b\"");
  EXPECT_TRUE(has_line(out, "x_bucket{a=\"b\",le=\"0.1\"} 2.0")) << out;
  EXPECT_TRUE(has_line(out, "x_bucket{a=\"b\",le=\"1.0\"} 2.0")) << out;
  EXPECT_TRUE(has_line(out, "x_bucket{a=\"b\",le=\"+Inf\"} 3.0")) << out;
  EXPECT_TRUE(has_line(out, "x_count{a=\"b\"} 3.0")) << out;
  EXPECT_TRUE(has_line(out, "x_sum{a=\"b\"} 5.15")) << out;
}

TEST(ServeMetrics, RendersVllmsNamesWithTheModelLabel) {
  ServeMetrics m("tiny", 512);
  m.observe_first_token(0.02, 5);
  m.observe_token_gap(0.01);
  SchedulerStats s;
  s.num_running = 2;
  s.num_waiting = 1;
  s.kv_usage = 0.25;
  m.observe_step(7, 2, s);
  FinishedRequestTimes f;
  f.reason = FinishReason::kLength;
  f.e2e_s = 0.5;
  f.generation_tokens = 2;
  f.decode_s = 0.01;
  m.observe_finished(f);
  const std::string text = "\n" + m.render();
  const std::string l = "model_name=\"tiny\",engine=\"0\"";
  EXPECT_TRUE(has_line(text, "vllm:num_requests_running{" + l + "} 2.0")) << text;
  EXPECT_TRUE(has_line(text, "vllm:num_requests_waiting{" + l + "} 1.0"));
  EXPECT_TRUE(has_line(text, "vllm:kv_cache_usage_perc{" + l + "} 0.25"));
  EXPECT_TRUE(has_line(text, "vllm:prompt_tokens_total{" + l + "} 5.0"));
  EXPECT_TRUE(has_line(text, "vllm:generation_tokens_total{" + l + "} 2.0"));
  EXPECT_TRUE(
      has_line(text, "vllm:request_success_total{" + l + ",finished_reason=\"length\"} 1.0"));
  EXPECT_TRUE(has_line(text, "vllm:request_success_total{" + l + ",finished_reason=\"stop\"} 0.0"));
  EXPECT_TRUE(has_line(text, "vllm:time_to_first_token_seconds_count{" + l + "} 1.0"));
  EXPECT_TRUE(has_line(text, "vllm:inter_token_latency_seconds_count{" + l + "} 1.0"));
  EXPECT_TRUE(has_line(text, "vllm:time_per_output_token_seconds_count{" + l + "} 1.0"));
  EXPECT_TRUE(has_line(text, "vllm:e2e_request_latency_seconds_bucket{" + l + ",le=\"0.5\"} 1.0"));
  EXPECT_TRUE(has_line(text, "vllm:iteration_tokens_total_sum{" + l + "} 7.0"));
  EXPECT_TRUE(has_line(text, "# TYPE vllm:time_to_first_token_seconds histogram"));
  EXPECT_TRUE(has_line(text, "# TYPE vllm:prompt_tokens counter"));
  // 1, 2, 5, ..., 500: vLLM's 1-2-5 buckets up to max_model_len.
  EXPECT_TRUE(has_line(text, "vllm:request_prompt_tokens_bucket{" + l + ",le=\"500.0\"} 1.0"));
}

}  // namespace
}  // namespace servesim
