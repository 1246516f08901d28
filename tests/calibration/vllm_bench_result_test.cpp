// read_vllm_bench_result's refusals of figures that read but cannot be replayed or summed —
// the inputs fuzz_vllm_bench_result found or probes (tests/fuzz/corpus/fuzz_vllm_bench_result/
// regress-*): a latency or send-time span beyond 1e9 s whose sums overflow to infinity, summary
// latencies and throughputs below 0, a duration of 0, null or so short that the throughputs are
// infinite, counts whose sum wraps. Each is a one-line ConfigError naming the key.
#include "calibration/measured/vllm_bench_result.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "models/config_error.h"

namespace servesim {
namespace {

nlohmann::json detailed() {
  std::ifstream in(SERVESIM_SOURCE_DIR "/tests/calibration/data/measured/vllm-bench-detailed.json");
  return nlohmann::json::parse(in);
}

// The error for `j`, which must be one line naming "edited.json" and `key`.
std::string error_of(const nlohmann::json& j, const std::string& key) {
  try {
    vllm_bench_result_from_json(j, "edited.json");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_EQ(what.rfind("edited.json: ", 0), 0u) << what;
    EXPECT_NE(what.find(key), std::string::npos) << what;
    return what;
  }
  ADD_FAILURE() << "no error for " << key;
  return "";
}

TEST(VllmBenchResult, AnE2eSummedFromItlsMustStayFinite) {
  nlohmann::json j = detailed();
  j.erase("latencies");
  j["ttfts"][0] = 1e308;
  j["itls"][0] = {1e308, 1e308};
  EXPECT_NE(error_of(j, "ttfts[0]").find("beyond 1e9 s"), std::string::npos);
  j["ttfts"][0] = 0.5;
  j["itls"][0] = {6e8, 6e8};
  EXPECT_NE(error_of(j, "ttfts[0] plus itls[0]").find("beyond 1e9 s"), std::string::npos);
}

TEST(VllmBenchResult, SendTimesSpanningMoreThan1e9SecondsAreRefused) {
  nlohmann::json j = detailed();
  j["start_times"][0] = -1e308;
  j["start_times"][1] = 1e308;  // the difference is infinite
  EXPECT_NE(error_of(j, "start_times[1] after the first send").find("beyond 1e9 s"),
            std::string::npos);
  j = detailed();  // send times of any clock still read
  j["start_times"] = {5e8, 5e8 + 1, 5e8 + 2, 5e8 + 3, 5e8 + 4, 5e8 + 5};
  EXPECT_DOUBLE_EQ(vllm_bench_result_from_json(j, "edited.json").requests[5].arrival_s, 5);
}

TEST(VllmBenchResult, SummaryLatenciesAndRatesMustNotBeNegative) {
  nlohmann::json j = detailed();
  j["mean_ttft_ms"] = -5;
  EXPECT_NE(error_of(j, "mean_ttft_ms").find("[0, 1e12]"), std::string::npos);
  j = detailed();
  j["p99_e2el_ms"] = 1e300;
  error_of(j, "p99_e2el_ms");
  j = detailed();
  j["request_throughput"] = -1;
  EXPECT_NE(error_of(j, "request_throughput").find("a rate >= 0"), std::string::npos);
}

TEST(VllmBenchResult, TheDurationMustBeLongEnoughForFiniteThroughputs) {
  nlohmann::json j = detailed();
  j["duration"] = 1e-320;
  j.erase("request_throughput");
  EXPECT_NE(error_of(j, "duration").find(">= 1e-6"), std::string::npos);
  j["duration"] = nullptr;
  EXPECT_NE(error_of(j, "duration is null").find("the run's seconds"), std::string::npos);
}

TEST(VllmBenchResult, CountsMustLeaveTheirSumInRange) {
  nlohmann::json j = detailed();
  j["completed"] = 18446744073709551615ull;
  j["failed"] = 1;
  EXPECT_NE(error_of(j, "completed").find("[0, 1e15]"), std::string::npos);
  j["completed"] = 1'000'000'000'000'000ull;
  j["failed"] = 1'000'000'000'000'000ull;
  const MeasuredRun run = vllm_bench_result_from_json(j, "edited.json");
  EXPECT_EQ(run.summary.requests, 2'000'000'000'000'000ull);
  EXPECT_TRUE(std::isfinite(run.summary.error_rate));
}

}  // namespace
}  // namespace servesim
