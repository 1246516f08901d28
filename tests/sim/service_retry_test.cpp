// Timeouts and retries on the service path: client and gateway timeouts counted as timed_out
// and aborted in the engine, capped exponential backoff (the exact sequence with jitter
// "none"), attempts per request and in the summary, closed loops that retry inside their
// cycle, determinism, bad input, and refused clients with no think time that must still let
// the run end (issue #19).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/catalog.h"
#include "models/config_error.h"
#include "sim/metrics/result_writer.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"
#include "sim/service/client_spec.h"

namespace servesim {
namespace {

nlohmann::json scenario(const nlohmann::json& workload, const nlohmann::json& service) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "model": "Llama-2-7B", "gpu": "A100-80GB", "engine": {"max_model_len": 4096}, "seed": 7})");
  j["workload"] = workload;
  j["service"] = service;
  return j;
}

nlohmann::json closed_loop(int clients, int requests, int output_tokens) {
  nlohmann::json w = nlohmann::json::parse(R"({"arrival": {"type": "closed"},
                                                "prompt_tokens": 128})");
  w["arrival"]["clients"] = clients;
  w["num_requests"] = requests;
  w["output_tokens"] = output_tokens;
  return w;
}

SimulationConfig config_of(const nlohmann::json& j) {
  return parse_scenario(j, "", "test", Catalog()).config;
}

// Records every request and throws once more than `limit` arrive, so a run that would never
// end fails the test at once instead of hanging it. (Refusals in the same instant never return
// to the event loop, so Observer::should_stop would never be asked.)
class Records final : public Observer {
 public:
  explicit Records(size_t limit = 1'000'000) : limit_(limit) {}
  void on_request_done(const RequestRecord& r) override {
    all.push_back(r);
    if (all.size() > limit_) throw std::runtime_error("runaway: more requests than the limit");
  }
  std::vector<RequestRecord> all;

 private:
  size_t limit_;
};

SimulationResult run(const SimulationConfig& c, Records& records) {
  Simulation sim(c);
  return sim.run(records);
}

// A bucket of one request refilled at 0.5/s, no network: of two requests sent at 0 the second
// is refused at 0, again at 1 s (half a token back), and passes at 3 s.
nlohmann::json limited(int max_attempts) {
  nlohmann::json s = nlohmann::json::parse(R"({
    "gateway": {"rate_limit": {"requests_per_s": 0.5, "burst": 1}},
    "client": {"retry": {"on": ["rate_limited"], "initial_backoff_s": 1, "max_backoff_s": 10,
                         "multiplier": 2, "jitter": "none"}}})");
  s["client"]["retry"]["max_attempts"] = max_attempts;
  return s;
}

TEST(ServiceRetry, BackoffFollowsTheCappedExponentialSequence) {
  RetrySpec r;
  r.max_attempts = 6;
  r.initial_backoff_s = 0.5;
  r.max_backoff_s = 3;
  r.multiplier = 2;
  r.jitter = Jitter::kNone;
  Rng rng(1);
  const double expected[] = {0.5, 1, 2, 3, 3};
  for (int k = 1; k <= 5; ++k) EXPECT_DOUBLE_EQ(r.backoff_s(k, rng), expected[k - 1]) << k;
  r.jitter = Jitter::kFull;
  for (int i = 0; i < 1000; ++i) {
    const double b = r.backoff_s(4, rng);
    ASSERT_GE(b, 0);
    ASSERT_LT(b, 3);
  }
  r.jitter = Jitter::kEqual;
  for (int i = 0; i < 1000; ++i) {
    const double b = r.backoff_s(2, rng);
    ASSERT_GE(b, 0.5);
    ASSERT_LT(b, 1);
  }
}

TEST(ServiceRetry, ARefusedRequestIsRetriedAfterItsBackoffUntilItPasses) {
  Records records;
  const SimulationResult r = run(config_of(scenario(closed_loop(2, 2, 8), limited(4))), records);
  ASSERT_EQ(records.all.size(), 2u);
  const RequestRecord& first = records.all[0].attempts == 1 ? records.all[0] : records.all[1];
  const RequestRecord& retried = records.all[0].attempts == 1 ? records.all[1] : records.all[0];
  EXPECT_EQ(first.status, RequestOutcome::kOk);
  ASSERT_EQ(retried.status, RequestOutcome::kOk);
  EXPECT_EQ(retried.attempts, 3);                   // refused at 0 and 1 s, passed at 3 s
  EXPECT_DOUBLE_EQ(retried.segments.retry_s, 3.0);  // backoffs 1 s + 2 s
  EXPECT_NEAR(retried.ttft_s(), 3.0 + (first.ttft_s() - first.segments.retry_s), 0.1);
  EXPECT_EQ(r.summary.retries, 2u);
  EXPECT_EQ(r.summary.retried_requests, 1u);
  EXPECT_EQ(r.summary.retried_succeeded, 1u);
  EXPECT_EQ(r.summary.rejected, 0u);
  EXPECT_DOUBLE_EQ(r.summary.error_rate, 0.0);
}

TEST(ServiceRetry, ARequestThatRunsOutOfAttemptsFailsWithItsLastCause) {
  Records records;
  const SimulationResult r = run(config_of(scenario(closed_loop(2, 2, 8), limited(2))), records);
  ASSERT_EQ(records.all.size(), 2u);
  EXPECT_EQ(r.summary.rejected, 1u);
  EXPECT_EQ(r.summary.retries, 1u);
  EXPECT_EQ(r.summary.retried_succeeded, 0u);
  EXPECT_EQ(r.summary.time.failures[static_cast<size_t>(FailureCause::kRateLimited)], 1u);
  for (const RequestRecord& rec : records.all) {
    if (rec.status == RequestOutcome::kOk) continue;
    EXPECT_EQ(rec.attempts, 2);
    EXPECT_EQ(rec.cause, FailureCause::kRateLimited);
  }
}

TEST(ServiceRetry, ClosedLoopClientsSendTheirNextRequestOnlyAfterTheFinalOutcome) {
  // Enough attempts that every request passes in the end: three un-jittered clients retry in
  // step and can be refused together several times.
  nlohmann::json service = limited(8);
  service["gateway"]["rate_limit"]["requests_per_s"] = 2;
  Records records;
  run(config_of(scenario(closed_loop(3, 30, 16), service)), records);
  ASSERT_EQ(records.all.size(), 30u);
  std::vector<const RequestRecord*> by_id(30);
  uint64_t retried = 0;
  for (const RequestRecord& rec : records.all) {
    ASSERT_EQ(rec.status, RequestOutcome::kOk);
    by_id[rec.id] = &rec;
    if (rec.attempts > 1) ++retried;
  }
  EXPECT_GT(retried, 0u);
  // Ids follow send order. Three clients: when request i is sent, at most two of requests
  // 0..i-1 are still waiting for their final outcome, retries included.
  for (size_t i = 3; i < 30; ++i) {
    std::vector<double> done;
    for (size_t j = 0; j < i; ++j) done.push_back(by_id[j]->finish_s);
    std::sort(done.begin(), done.end());
    EXPECT_LE(done[i - 3], by_id[i]->arrival_s + 1e-9) << i;
  }
}

TEST(ServiceRetry, OpenLoopRetriesAreExtraArrivalsAndEveryRequestIsOneRecord) {
  nlohmann::json w = nlohmann::json::parse(R"({"arrival": {"type": "poisson", "rate_qps": 20},
      "prompt_tokens": 128, "output_tokens": 16, "num_requests": 200})");
  nlohmann::json service = limited(3);
  service["gateway"]["rate_limit"] = {{"requests_per_s", 10}, {"burst", 5}};
  Records records;
  const SimulationResult r = run(config_of(scenario(w, service)), records);
  ASSERT_EQ(records.all.size(), 200u);
  uint64_t attempts = 0;
  for (const RequestRecord& rec : records.all) attempts += static_cast<uint64_t>(rec.attempts);
  EXPECT_EQ(attempts, 200u + r.summary.retries);
  EXPECT_GT(r.summary.retries, 20u);
  // The gateway saw every attempt that passed the limit: the completed ones.
  EXPECT_EQ(r.stations[0].jobs, r.summary.completed);
}

TEST(ServiceTimeout, AClientTimeoutFailsTheRequestAndAbortsItInTheEngine) {
  // 2,000 tokens take about 25 s to decode; the client gives up after 1 s.
  const nlohmann::json service = nlohmann::json::parse(R"({"network": {"rtt_s": 0.01},
      "client": {"timeout_s": 1}})");
  Records records;
  const SimulationResult r = run(config_of(scenario(closed_loop(1, 5, 2000), service)), records);
  ASSERT_EQ(records.all.size(), 5u);
  EXPECT_EQ(r.summary.timed_out, 5u);
  EXPECT_EQ(r.summary.completed, 0u);
  EXPECT_DOUBLE_EQ(r.summary.error_rate, 1.0);
  EXPECT_EQ(r.summary.time.failures[static_cast<size_t>(FailureCause::kTimedOut)], 5u);
  for (const RequestRecord& rec : records.all) {
    EXPECT_EQ(rec.status, RequestOutcome::kTimedOut);
    EXPECT_EQ(rec.cause, FailureCause::kTimedOut);
  }
  // Aborted: the engine decoded about a second per request, not 2,000 tokens each, and the
  // next request was sent when the client gave up.
  ASSERT_EQ(r.replicas.size(), 1u);
  EXPECT_LT(r.replicas[0].steps, 5 * 200);
  EXPECT_LT(r.simulated_s, 7.0);  // the last time-series sample included
}

TEST(ServiceTimeout, TimedOutAttemptsAreRetriedWhenThePolicySaysSo) {
  const nlohmann::json service = nlohmann::json::parse(R"({"client": {"timeout_s": 0.5,
      "retry": {"max_attempts": 3, "on": ["timed_out"], "initial_backoff_s": 0.1,
                "jitter": "equal"}}})");
  Records records;
  const SimulationResult r = run(config_of(scenario(closed_loop(2, 4, 2000), service)), records);
  ASSERT_EQ(records.all.size(), 4u);
  for (const RequestRecord& rec : records.all) {
    EXPECT_EQ(rec.status, RequestOutcome::kTimedOut);
    EXPECT_EQ(rec.attempts, 3);
  }
  EXPECT_EQ(r.summary.retries, 8u);
}

TEST(ServiceTimeout, TheGatewayAnswers504WhenTheFirstTokenIsLate) {
  // Retrieval takes 200 ms, the gateway waits 50 ms for the first token: every request fails
  // at the gateway, and the late ones are dropped when retrieval ends, never reaching the
  // engine.
  const nlohmann::json service = nlohmann::json::parse(R"({"network": {"rtt_s": 0.02},
      "gateway": {"timeout_s": 0.05},
      "stages": [{"name": "retrieval", "workers": 4, "request_s": 0.2}]})");
  Records records;
  const SimulationResult r = run(config_of(scenario(closed_loop(2, 10, 32), service)), records);
  ASSERT_EQ(records.all.size(), 10u);
  EXPECT_EQ(r.summary.timed_out, 10u);
  EXPECT_EQ(r.replicas[0].steps, 0);
  // Half a round trip there, 50 ms at the gateway, the 504 half a round trip back.
  std::vector<double> sends;
  for (const RequestRecord& rec : records.all) sends.push_back(rec.arrival_s);
  std::sort(sends.begin(), sends.end());
  EXPECT_NEAR(sends[2] - sends[0], 0.07, 1e-9);
  // A generous timeout lets the same requests through.
  nlohmann::json generous = service;
  generous["gateway"]["timeout_s"] = 5;
  Records ok;
  const SimulationResult g = run(config_of(scenario(closed_loop(2, 10, 32), generous)), ok);
  EXPECT_EQ(g.summary.completed, 10u);
}

TEST(ServiceRetry, SameSeedSameFingerprintWithRetriesAndJitter) {
  nlohmann::json w = nlohmann::json::parse(R"({"arrival": {"type": "poisson", "rate_qps": 30},
      "prompt_tokens": 256, "output_tokens": {"type": "uniform", "min": 16, "max": 400},
      "num_requests": 300})");
  const nlohmann::json service = nlohmann::json::parse(R"({
      "network": {"rtt_s": {"type": "lognormal", "mean": 0.02, "std": 0.005}},
      "gateway": {"timeout_s": 2, "rate_limit": {"requests_per_s": 15, "burst": 10}},
      "client": {"timeout_s": 3, "retry": {"max_attempts": 4, "initial_backoff_s": 0.2,
                                           "max_backoff_s": 2, "jitter": "full"}}})");
  Records a_records;
  Records b_records;
  const SimulationResult a = run(config_of(scenario(w, service)), a_records);
  const SimulationResult b = run(config_of(scenario(w, service)), b_records);
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.summary.retries, b.summary.retries);
  EXPECT_GT(a.summary.retries, 0u);
  nlohmann::json other = scenario(w, service);
  other["seed"] = 8;
  Records c_records;
  EXPECT_NE(run(config_of(other), c_records).fingerprint, a.fingerprint);
}

// Every combination of short timeouts, retries, queue caps, several API server processes and
// both batching policies: each request ends in exactly one record, its attempts within the
// policy, and the run drains (the replicas' KV blocks are checked at the end of every run).
TEST(ServiceRetry, EveryRequestEndsOnceUnderTimeoutsRetriesAndFullQueues) {
  const nlohmann::json base = nlohmann::json::parse(R"({
      "network": {"rtt_s": {"type": "exponential", "mean": 0.01}},
      "gateway": {"workers": 2, "queue_capacity": 8, "request_s": {"type": "exponential",
                  "mean": 0.002}, "rate_limit": {"requests_per_s": 40, "burst": 20}},
      "frontend": {"workers": 2, "request_s": 0.001, "step_s": 0.0002,
                   "per_output_token_s": 2e-5, "cv": 0.5},
      "stages": [{"name": "retrieval", "workers": 2, "queue_capacity": 4,
                  "request_s": {"type": "exponential", "mean": 0.03}}]})");
  int configs = 0;
  uint64_t timed_out = 0;
  uint64_t queue_full = 0;
  uint64_t retries = 0;
  for (double client_timeout : {0.0, 0.3, 2.0}) {
    for (double gateway_timeout : {0.0, 0.05, 0.5}) {
      for (const char* batching : {"continuous", "static"}) {
        nlohmann::json service = base;
        service["gateway"]["timeout_s"] = gateway_timeout;
        service["client"] = nlohmann::json::parse(R"({"retry": {"max_attempts": 3,
            "initial_backoff_s": 0.05, "max_backoff_s": 0.4, "jitter": "full"}})");
        service["client"]["timeout_s"] = client_timeout;
        nlohmann::json w = nlohmann::json::parse(R"({"arrival": {"type": "poisson",
            "rate_qps": 60}, "prompt_tokens": {"type": "uniform", "min": 16, "max": 800},
            "output_tokens": {"type": "uniform", "min": 1, "max": 120}, "num_requests": 400})");
        nlohmann::json j = scenario(w, service);
        j["engine"]["batching"] = batching;
        SCOPED_TRACE(j.dump());
        Records records;
        const SimulationResult r = run(config_of(j), records);
        ASSERT_FALSE(r.stopped);
        ASSERT_EQ(records.all.size(), 400u);
        std::vector<int> seen(400, 0);
        for (const RequestRecord& rec : records.all) {
          ASSERT_LT(rec.id, 400u);
          ++seen[rec.id];
          EXPECT_GE(rec.attempts, 1);
          EXPECT_LE(rec.attempts, 3);
        }
        for (int n : seen) ASSERT_EQ(n, 1);
        EXPECT_EQ(r.summary.completed + r.summary.rejected + r.summary.timed_out, 400u);
        timed_out += r.summary.timed_out;
        queue_full += r.summary.time.failures[static_cast<size_t>(FailureCause::kQueueFull)];
        retries += r.summary.retries;
        ++configs;
      }
    }
  }
  EXPECT_EQ(configs, 18);
  EXPECT_GT(timed_out, 0u);  // the cases above were all met
  EXPECT_GT(queue_full, 0u);
  EXPECT_GT(retries, 0u);
}

// Issue #19: every request refused at once, no think time. Each refused client waits the
// minimum turnaround, so a 2 s stepped run ends after a bounded number of requests; without
// it the clients re-send in the same instant and the recorder throws past 100,000.
TEST(RefusedClients, AStepwiseRunWhoseEveryRequestIsRefusedStillEnds) {
  nlohmann::json w = nlohmann::json::parse(R"({"arrival": {"type": "stepped", "steps": [2, 4],
      "step_duration_s": 1}, "prompt_tokens": 5000, "output_tokens": 16})");
  for (const nlohmann::json& service :
       {nlohmann::json("none"), nlohmann::json::parse(R"({"gateway": {"rate_limit":
           {"requests_per_s": 1e-6, "burst": 1}}, "frontend": {}})")}) {
    SCOPED_TRACE(service.dump());
    Records records(100'000);
    const SimulationResult r = run(config_of(scenario(w, service)), records);
    EXPECT_FALSE(r.stopped);
    EXPECT_EQ(r.summary.completed, 0u);
    // Two clients for 1 s and four for 1 s at one request per millisecond each.
    EXPECT_GT(records.all.size(), 5000u);
    EXPECT_LE(records.all.size(), 6010u);
  }
}

void expect_error(const nlohmann::json& service, const std::string& needle) {
  try {
    config_of(scenario(closed_loop(1, 1, 1), service));
    FAIL() << "accepted " << service.dump();
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(needle), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(ClientSpec, ARetryPolicyThatCouldNeverStopAndOtherBadInputAreRefused) {
  const auto retry = [](const char* body) {
    return nlohmann::json::parse(std::string(R"({"client": {"retry": )") + body + "}}");
  };
  expect_error(retry(R"({"max_attempts": 0, "initial_backoff_s": 1})"), "max_attempts");
  expect_error(retry(R"({"max_attempts": 1000, "initial_backoff_s": 1})"), "max_attempts");
  expect_error(retry(R"({"initial_backoff_s": 1})"), "max_attempts");
  expect_error(retry(R"({"max_attempts": 3})"), "initial_backoff_s");
  expect_error(retry(R"({"max_attempts": 3, "initial_backoff_s": -1})"), "initial_backoff_s");
  expect_error(retry(R"({"max_attempts": 3, "initial_backoff_s": 1, "max_backoff_s": 0.5})"),
               "max_backoff_s");
  expect_error(retry(R"({"max_attempts": 3, "initial_backoff_s": 1, "multiplier": 0.5})"),
               "multiplier");
  expect_error(retry(R"({"max_attempts": 3, "initial_backoff_s": 1, "jitter": "random"})"),
               "jitter");
  expect_error(retry(R"({"max_attempts": 3, "initial_backoff_s": 1, "on": ["too_long"]})"), "on");
  expect_error(retry(R"({"max_attempts": 3, "initial_backoff_s": 1, "on": []})"), "on");
  expect_error(retry(R"({"max_attempts": 3, "initial_backof_s": 1})"), "initial_backof_s");
  expect_error(retry("5"), "retry");
  expect_error(nlohmann::json::parse(R"({"client": {"timeout_s": -1}})"), "timeout_s");
  expect_error(nlohmann::json::parse(R"({"client": {"timeout": 1}})"), "timeout");
  expect_error(nlohmann::json::parse(R"({"client": 3})"), "client");
  expect_error(nlohmann::json::parse(R"({"gateway": {"timeout_s": -2}})"), "timeout_s");
}

TEST(ServiceRetry, RequestsCsvAppendsAttemptsAndRetryTime) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("servesim-retry-csv-" + std::to_string(::getpid()));
  {
    ResultWriter writer(dir.string());
    RequestRecord r;
    r.id = 4;
    r.first_scheduled_s = 3.5;
    r.first_token_s = 3.6;
    r.finish_s = 4;
    r.attempts = 3;
    r.segments.retry_s = 3;
    writer.on_request_done(r);
    writer.commit();
  }
  std::ifstream in(dir / "requests.csv");
  std::string header;
  std::string row;
  std::getline(in, header);
  std::getline(in, row);
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(header.ends_with(",decode_s,stream_s,attempts,retry_s,decode_queue_s,kv_transfer_s"))
      << header;
  EXPECT_TRUE(row.ends_with(",3,3.000000,0.000000,0.000000")) << row;
}

}  // namespace
}  // namespace servesim
