// The service path in a whole simulation: segments that add up, a saturated CPU station that
// caps throughput at workers / service time, rate limits and full queues counted by cause,
// closed-loop clients that wait for the answer to reach them, determinism, and bad input.
#include "sim/service/service_path.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "models/catalog.h"
#include "models/config_error.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"
#include "tests/sim/service_test_run.h"

namespace servesim {
namespace {

using testing::config_of;
using testing::Records;
using testing::run;
using testing::sum_to_e2e;
using testing::sum_to_ttft;

nlohmann::json scenario_with(const nlohmann::json& service) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "model": "Llama-2-7B", "gpu": "A100-80GB", "engine": {"max_model_len": 4096},
    "workload": {"arrival": {"type": "poisson", "rate_qps": 4}, "prompt_tokens": 256,
                 "output_tokens": 64, "num_requests": 300},
    "seed": 3})");
  j["service"] = service;
  return j;
}

// A RAG-like path: 20 ms RTT, a two-worker gateway, one API server, a retrieval stage.
nlohmann::json rag_service() {
  return nlohmann::json::parse(R"({
    "network": {"rtt_s": {"type": "lognormal", "mean": 0.02, "std": 0.005}},
    "gateway": {"workers": 2, "request_s": {"type": "exponential", "mean": 0.001}},
    "frontend": {"request_s": 0.002, "per_prompt_token_s": 2e-6, "step_s": 0.0005,
                 "per_output_token_s": 0.0001, "cv": 0.3},
    "stages": [{"name": "retrieval", "workers": 4,
                "request_s": {"type": "lognormal", "mean": 0.08, "std": 0.03}}]})");
}

TEST(ServicePath, SegmentsSumToE2eAndTtftForEveryRequest) {
  Records records;
  const SimulationResult r = run(config_of(scenario_with(rag_service())), &records);
  ASSERT_EQ(records.all.size(), 300u);
  for (const RequestRecord& rec : records.all) {
    SCOPED_TRACE(rec.id);
    ASSERT_EQ(rec.status, RequestOutcome::kOk);
    EXPECT_NEAR(sum_to_e2e(rec.segments), rec.e2e_s(), 1e-9);
    EXPECT_NEAR(sum_to_ttft(rec.segments), rec.ttft_s(), 1e-9);
    EXPECT_GT(rec.segments.network_s, 0);
    EXPECT_GT(rec.segments.pre_model_s, 0);
    EXPECT_GT(rec.segments.stream_s, rec.segments.network_s);  // output processing + network
    EXPECT_LE(rec.arrival_s, rec.first_scheduled_s);
  }
  // Retrieval (~80 ms) dominates what happens before the engine.
  const TimeBreakdown& t = r.summary.time;
  EXPECT_TRUE(t.has_service());
  const double pre = t.segments[static_cast<size_t>(Segment::kPreModel)].mean_s;
  EXPECT_NEAR(pre, 0.08, 0.01);
  double e2e_shares = 0, ttft_shares = 0;
  for (const SegmentStats& s : t.segments) {
    e2e_shares += s.share_of_e2e;
    ttft_shares += s.share_of_ttft;
  }
  EXPECT_NEAR(e2e_shares, 1.0, 1e-9);
  EXPECT_NEAR(ttft_shares, 1.0, 1e-9);
  EXPECT_NEAR(t.mean_server_ttft_s,
              t.mean_client_ttft_s - 2 * t.segments[static_cast<size_t>(Segment::kNetwork)].mean_s,
              1e-12);
  ASSERT_EQ(r.stations.size(), 3u);  // gateway, frontend, retrieval
  EXPECT_EQ(r.stations[0].name, "gateway");
  EXPECT_EQ(r.stations[2].name, "retrieval");
  EXPECT_EQ(r.stations[2].jobs, 300u);
}

TEST(ServicePath, WithServiceNoneNothingAboveTheEngineTakesTime) {
  Records records;
  const SimulationResult with_none = run(config_of(scenario_with("none")), &records);
  nlohmann::json plain = scenario_with("none");
  plain.erase("service");
  const SimulationResult served = run(config_of(plain));  // through vLLM's API server
  EXPECT_NE(with_none.fingerprint, served.fingerprint);
  ASSERT_EQ(served.stations.size(), 1u);
  EXPECT_EQ(served.stations[0].name, "frontend");
  EXPECT_FALSE(with_none.summary.time.has_service());
  EXPECT_TRUE(with_none.stations.empty());
  for (const RequestRecord& rec : records.all) {
    EXPECT_EQ(rec.segments.network_s, 0);
    EXPECT_NEAR(sum_to_e2e(rec.segments), rec.e2e_s(), 1e-9);
  }
}

TEST(ServicePath, ASaturatedApiServerCapsThroughputAtWorkersOverServiceTime) {
  // 100 requests/s offered; each costs the API server 20 ms: one process serves 50/s.
  nlohmann::json j = scenario_with(nlohmann::json::parse(R"({"frontend": {"request_s": 0.02}})"));
  j["workload"] = nlohmann::json::parse(R"({"arrival": {"type": "poisson", "rate_qps": 100},
      "prompt_tokens": 64, "output_tokens": 16, "num_requests": 3000})");
  const SimulationResult one = run(config_of(j));
  EXPECT_NEAR(one.summary.request_throughput, 50.0, 2.5);
  ASSERT_EQ(one.stations.size(), 1u);
  EXPECT_GT(one.stations[0].utilisation, 0.97);
  EXPECT_GT(one.stations[0].mean_queue, 100);  // the backlog waits before the engine
  // Three processes (--api-server-count 3) have room for 150/s: the offered load passes.
  j["service"]["frontend"]["workers"] = 3;
  const SimulationResult three = run(config_of(j));
  EXPECT_NEAR(three.summary.request_throughput, 100.0, 6.0);
  ASSERT_EQ(three.stations.size(), 3u);
  for (const StationStats& s : three.stations) EXPECT_LT(s.utilisation, 0.8);
}

TEST(ServicePath, RateLimitRefusalsAreCountedByCause) {
  nlohmann::json j = scenario_with(
      nlohmann::json::parse(R"({"gateway": {"rate_limit": {"requests_per_s": 5, "burst": 10}}})"));
  j["workload"]["arrival"]["rate_qps"] = 20;
  j["workload"]["num_requests"] = 400;
  Records records;
  const SimulationResult r = run(config_of(j), &records);
  const MetricsSummary& m = r.summary;
  EXPECT_EQ(m.completed + m.rejected, 400u);
  EXPECT_EQ(m.time.failures[static_cast<size_t>(FailureCause::kRateLimited)], m.rejected);
  // ~20 s of arrivals: the burst of 10 plus 5 a second.
  const double arrivals_s = records.all.back().arrival_s;
  EXPECT_NEAR(static_cast<double>(m.completed), 10 + 5 * arrivals_s, 8);
  for (const RequestRecord& rec : records.all) {
    if (rec.status != RequestOutcome::kOk) {
      EXPECT_EQ(rec.cause, FailureCause::kRateLimited);
    }
  }
}

TEST(ServicePath, AFullGatewayQueueRefusesWith503Cause) {
  nlohmann::json j = scenario_with(nlohmann::json::parse(
      R"({"gateway": {"workers": 1, "queue_capacity": 3, "request_s": 0.1}})"));
  j["workload"]["arrival"]["rate_qps"] = 30;
  j["workload"]["num_requests"] = 200;
  const SimulationResult r = run(config_of(j));
  EXPECT_GT(r.summary.rejected, 100u);
  EXPECT_EQ(r.summary.time.failures[static_cast<size_t>(FailureCause::kQueueFull)],
            r.summary.rejected);
  EXPECT_EQ(r.stations[0].rejected, r.summary.rejected);
  EXPECT_EQ(r.stations[0].max_queue, 3u);
}

TEST(ServicePath, ClosedLoopClientsSendOnlyOnceTheAnswerReachesThem) {
  nlohmann::json j = scenario_with(nlohmann::json::parse(R"({"network": {"rtt_s": 0.5}})"));
  j["workload"] = nlohmann::json::parse(R"({"arrival": {"type": "closed", "clients": 1},
      "prompt_tokens": 128, "output_tokens": 8, "num_requests": 5})");
  Records records;
  run(config_of(j), &records);
  ASSERT_EQ(records.all.size(), 5u);
  for (size_t i = 1; i < records.all.size(); ++i) {
    EXPECT_GE(records.all[i].arrival_s, records.all[i - 1].finish_s);
    // Half a round trip each way around the engine's work.
    EXPECT_GE(records.all[i].ttft_s(), 0.5);
  }
}

TEST(ServicePath, SameSeedSameRunAndTheServiceChangesTheTrace) {
  const SimulationConfig c = config_of(scenario_with(rag_service()));
  const SimulationResult a = run(c);
  const SimulationResult b = run(c);
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.summary.ttft.p99_s, b.summary.ttft.p99_s);
  const SimulationResult none = run(config_of(scenario_with("none")));
  EXPECT_NE(a.fingerprint, none.fingerprint);
  EXPECT_GT(a.summary.ttft.mean_s, none.summary.ttft.mean_s + 0.09);
}

void expect_error(const nlohmann::json& service, const std::string& needle) {
  SCOPED_TRACE(service.dump());
  testing::expect_one_line_error([&] { config_of(scenario_with(service)); }, needle);
}

TEST(ServiceSpec, BadInputIsAOneLineErrorNamingTheKey) {
  expect_error("bogus", "\"none\" or an object");
  expect_error(nlohmann::json::parse(R"({"frontnd": {}})"), "frontnd");
  expect_error(nlohmann::json::parse(R"({"frontend": {"workers": 0}})"), "workers");
  expect_error(nlohmann::json::parse(R"({"gateway": {"queue_capacity": -1}})"), "queue_capacity");
  expect_error(nlohmann::json::parse(R"({"frontend": {"per_prompt_token_s": -1e-6}})"),
               "per_prompt_token_s");
  expect_error(nlohmann::json::parse(R"({"gateway": {"rate_limit": {}}})"), "requests_per_s");
  expect_error(nlohmann::json::parse(R"({"gateway": {"rate_limit": {"burst": 3,
      "tokens_per_min": 100}}})"),
               "burst");
  expect_error(nlohmann::json::parse(R"({"network": {"rtt_s": {"type": "lognormal"}}})"), "rtt_s");
  expect_error(nlohmann::json::parse(R"({"stages": [{"workers": 2}]})"), "name");
  expect_error(nlohmann::json::parse(R"({"stages": {"name": "x"}})"), "stages");
  expect_error(nlohmann::json::parse(R"({"frontend": {"cv": "high"}})"), "cv");
}

}  // namespace
}  // namespace servesim
