#include "serve/loadtest/loadtest_report.h"

#include <gtest/gtest.h>

namespace servesim {
namespace {

MetricsSummary step(double ttft_p99_s, double error_rate) {
  MetricsSummary s;
  s.requests = 10;
  s.ttft.p99_s = ttft_p99_s;
  s.error_rate = error_rate;
  return s;
}

TEST(Knee, FirstStepBreakingAnSloOrTheErrorRate) {
  SloSpec slo;
  slo.ttft_s = 0.5;
  EXPECT_EQ(find_knee({step(0.1, 0), step(0.4, 0)}, slo, 0.01).step, -1);
  const Knee by_ttft = find_knee({step(0.1, 0), step(0.6, 0), step(0.9, 0)}, slo, 0.01);
  EXPECT_EQ(by_ttft.step, 1);
  EXPECT_EQ(by_ttft.reason, "TTFT p99 600.0 ms > SLO 500.0 ms");
  const Knee by_errors = find_knee({step(0.1, 0.02)}, SloSpec{}, 0.01);
  EXPECT_EQ(by_errors.step, 0);
  EXPECT_EQ(by_errors.reason, "error rate 2.0% > 1.0%");
  MetricsSummary empty;  // a step without counted requests is not judged
  EXPECT_EQ(find_knee({empty, step(0.1, 0)}, slo, 0.01).step, -1);
}

TEST(LoadtestJson, ErrorsByCauseAndKnee) {
  LoadtestResult r;
  r.errors[static_cast<size_t>(ErrorCause::kReset)] = 2;
  r.http_status[200] = 5;
  r.http_status[0] = 2;
  const nlohmann::json j =
      loadtest_json(r, LoadtestSetup{}, EndpointUrl::parse("http://h:1"), Knee{1, "why"}, {1, 4});
  EXPECT_EQ(j["errors"]["reset"], 2);
  EXPECT_EQ(j["errors"]["refused"], 0);
  EXPECT_EQ(j["http_status"]["200"], 5);
  EXPECT_EQ(j["http_status"]["none"], 2);
  EXPECT_EQ(j["knee"]["step"], 2);
  EXPECT_EQ(j["knee"]["clients"], 4);
  EXPECT_EQ(j["url"], "http://h:1");
}

}  // namespace
}  // namespace servesim
