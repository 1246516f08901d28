// Diagnosis rules on synthetic run facts: each fires at its threshold and not just below it,
// cites its metrics, and a run where nothing fires is called healthy.
#include "sim/metrics/diagnosis.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace servesim {
namespace {

SegmentStats& seg(RunFacts& f, Segment s) {
  return f.summary.time.segments[static_cast<size_t>(s)];
}

// A calm engine-only run: 100 requests, TTFT 40 ms (p99 80 ms), the GPU half busy.
RunFacts calm_run() {
  RunFacts f;
  MetricsSummary& m = f.summary;
  m.requests = 100;
  m.completed = 100;
  m.input_tokens = 51200;
  m.request_throughput = 2.0;
  m.error_rate = 0;
  m.ttft = {100, 0.040, 0.040, 0.050, 0.060, 0.080, 0.090};
  m.e2e = {100, 1.4, 1.4, 1.5, 1.55, 1.6, 1.7};
  m.time.count = 100;
  seg(f, Segment::kEngineQueue) = {0.005, 0.004, 0.010, 0.020, 0.003, 0.125};
  seg(f, Segment::kPrefill) = {0.035, 0.035, 0.040, 0.060, 0.025, 0.875};
  seg(f, Segment::kDecode) = {1.36, 1.36, 1.45, 1.5, 0.972, 0};
  ReplicaSummary r;
  r.steps = 1000;
  r.busy_s = 50;
  r.max_num_seqs = 256;
  r.max_num_batched_tokens = 2048;
  r.admission.peak_running = 12;
  r.admission.peak_kv_usage = 0.05;
  f.replicas.push_back(r);
  f.run_s = 100;
  return f;
}

// A copy: the findings are usually a temporary.
std::optional<Finding> finding(const std::vector<Finding>& findings, const std::string& code) {
  auto it = std::find_if(findings.begin(), findings.end(),
                         [&](const Finding& f) { return f.code == code; });
  if (it == findings.end()) return std::nullopt;
  return *it;
}

bool cites(const Finding& f, const std::string& metric) {
  return std::any_of(f.evidence.begin(), f.evidence.end(),
                     [&](const Evidence& e) { return e.metric == metric; });
}

TEST(Diagnosis, CalmRunIsHealthyWithItsHeadlineNumbers) {
  const std::vector<Finding> d = diagnose(calm_run());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].code, "healthy");
  EXPECT_EQ(d[0].text,
            "no bottleneck found: 2.00 req/s, TTFT p50 40.0 ms / p99 80.0 ms, E2E p50 1400.0 ms, "
            "GPU busy 50%, error rate 0.00%");
  EXPECT_TRUE(cites(d[0], "gpu_busy"));
}

TEST(Diagnosis, UnknownRunLengthSaysGpuBusyUnknown) {
  RunFacts f = calm_run();
  f.run_s = 0;
  EXPECT_NE(diagnose(f)[0].text.find("GPU busy unknown"), std::string::npos);
}

RunFacts with_station(double utilisation, double mean_queue) {
  RunFacts f = calm_run();
  StationStats s;
  s.name = "gateway";
  s.workers = 1;
  s.utilisation = utilisation;
  s.mean_queue = mean_queue;
  s.max_queue = 40;
  s.mean_service_s = 0.020;
  f.stations.push_back(s);
  return f;
}

TEST(Diagnosis, RepeatedPromptsComeFirstOnceARunRepeatsThem) {
  RunFacts f = calm_run();
  f.summary.prefix_cache_hit_rate = 0.9;
  EXPECT_FALSE(finding(diagnose(f), "repeated_prompts")) << "every prompt new";
  f.distinct_prompts = 100;  // as many prompts as requests: none repeated
  EXPECT_FALSE(finding(diagnose(f), "repeated_prompts"));
  f.distinct_prompts = 99;
  const std::vector<Finding> all = diagnose(f);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front().code, "repeated_prompts");
  EXPECT_NE(all.front().text.find("only 99 distinct prompts over 100 requests"), std::string::npos)
      << all.front().text;
  EXPECT_NE(all.front().text.find("served 90% of the prompt tokens"), std::string::npos);
  EXPECT_TRUE(cites(all.front(), "workload.distinct_prompts"));
  EXPECT_TRUE(cites(all.front(), "summary.prefix_cache_hit_rate"));
  // A load test sees no replicas: it names the repeats, not a hit rate it cannot know.
  f.replicas.clear();
  const Finding outside = *finding(diagnose(f), "repeated_prompts");
  EXPECT_NE(outside.text.find("the server's prefix cache can serve the repeats"), std::string::npos)
      << outside.text;
  EXPECT_FALSE(cites(outside, "summary.prefix_cache_hit_rate"));
}

TEST(Diagnosis, SaturatedStationNamesItselfItsQueueAndItsCap) {
  const std::vector<Finding> d = diagnose(with_station(0.95, 1.0));
  const std::optional<Finding> f = finding(d, "station_saturated");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->text,
            "gateway is saturated: 95% busy with 1.0 jobs waiting on average (40 at most); 1 "
            "worker x 20.00 ms caps it at 50.0 jobs/s, so throughput stays at 2.00 req/s while "
            "the GPU is 50% busy");
  EXPECT_TRUE(cites(*f, "service.stations[gateway].utilisation"));
  EXPECT_TRUE(cites(*f, "service.stations[gateway].mean_queue"));
  EXPECT_FALSE(finding(d, "healthy"));
}

TEST(Diagnosis, StationBelowEitherThresholdIsNotSaturated) {
  EXPECT_FALSE(finding(diagnose(with_station(0.949, 5.0)), "station_saturated"));
  EXPECT_FALSE(finding(diagnose(with_station(1.0, 0.99)), "station_saturated"));
}

TEST(Diagnosis, FailureCauseFiresFromOnePercentOfRequests) {
  RunFacts f = calm_run();
  f.summary.requests = 100;
  f.summary.time.failures[static_cast<size_t>(FailureCause::kRateLimited)] = 1;
  const std::optional<Finding> r = finding(diagnose(f), "rate_limited");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->text,
            "1 of 100 requests (1.0%) were refused by the gateway's rate limit (HTTP 429)");
  EXPECT_TRUE(cites(*r, "summary.where_time_went.errors_by_cause.rate_limited"));
  f.summary.requests = 101;
  EXPECT_FALSE(finding(diagnose(f), "rate_limited"));
}

TEST(Diagnosis, FailuresWithoutACauseAreStillCounted) {
  RunFacts f = calm_run();
  f.summary.time.failures[static_cast<size_t>(FailureCause::kNone)] = 2;
  const std::optional<Finding> r = finding(diagnose(f), "failed");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->text, "2 of 100 requests (2.0%) failed, with no cause recorded");
}

TEST(Diagnosis, SloMissedBelowNinetyPercentAttainment) {
  RunFacts f = calm_run();
  f.summary.slo_attainment = 0.9;
  f.summary.goodput = 1.8;
  EXPECT_FALSE(finding(diagnose(f), "slo_missed"));
  f.summary.slo_attainment = 0.899;
  const std::optional<Finding> r = finding(diagnose(f), "slo_missed");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->text, "only 89.9% of requests met the SLOs (goodput 1.80 of 2.00 req/s)");
}

TEST(Diagnosis, QueueFullNamesTheStationThatRefused) {
  RunFacts f = with_station(0.5, 0);
  f.stations[0].rejected = 7;
  f.summary.time.failures[static_cast<size_t>(FailureCause::kQueueFull)] = 7;
  const std::optional<Finding> q = finding(diagnose(f), "queue_full");
  ASSERT_TRUE(q);
  EXPECT_NE(q->text.find("full queue (HTTP 503) at gateway"), std::string::npos);
}

TEST(Diagnosis, SeqCapFiresFromATenthOfTheBusyTime) {
  RunFacts f = calm_run();
  f.replicas[0].admission.at_seq_cap_s = 5.0;
  const std::optional<Finding> s = finding(diagnose(f), "max_num_seqs_full");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text,
            "max_num_seqs (256) holds requests back: 10% of the busy time ran 256 sequences with "
            "requests still waiting, while the KV cache peaked at 5% used");
  EXPECT_TRUE(cites(*s, "replicas.peak_kv_usage"));
  f.replicas[0].admission.at_seq_cap_s = 4.95;
  EXPECT_FALSE(finding(diagnose(f), "max_num_seqs_full"));
}

TEST(Diagnosis, TokenBudgetFiresFromATenthOfTheBusyTime) {
  RunFacts f = calm_run();
  f.replicas[0].admission.at_token_budget_s = 5.0;
  const std::optional<Finding> t = finding(diagnose(f), "token_budget_full");
  ASSERT_TRUE(t);
  EXPECT_NE(t->text.find("max_num_batched_tokens (2048)"), std::string::npos);
  f.replicas[0].admission.at_token_budget_s = 4.95;
  EXPECT_FALSE(finding(diagnose(f), "token_budget_full"));
}

TEST(Diagnosis, KvCacheFiresOnBlockedStepsOrOnPreemptions) {
  RunFacts f = calm_run();
  f.replicas[0].admission.at_kv_limit_s = 5.0;
  EXPECT_TRUE(finding(diagnose(f), "kv_cache_full"));
  f.replicas[0].admission.at_kv_limit_s = 4.95;
  EXPECT_FALSE(finding(diagnose(f), "kv_cache_full"));
  f.replicas[0].preemptions = 1;  // 1 per 100 completed requests
  const std::optional<Finding> k = finding(diagnose(f), "kv_cache_full");
  ASSERT_TRUE(k);
  EXPECT_NE(k->text.find("1 preemptions (1.0 per 100 requests)"), std::string::npos);
  f.summary.completed = 101;
  EXPECT_FALSE(finding(diagnose(f), "kv_cache_full"));
}

TEST(Diagnosis, AdmissionCountersAddUpOverReplicas) {
  RunFacts f = calm_run();
  f.replicas.push_back(f.replicas[0]);  // 100 s busy in all
  f.replicas[0].admission.at_seq_cap_s = 6.0;
  f.replicas[1].admission.at_seq_cap_s = 4.0;
  EXPECT_TRUE(finding(diagnose(f), "max_num_seqs_full"));
  f.replicas[1].admission.at_seq_cap_s = 3.95;
  EXPECT_FALSE(finding(diagnose(f), "max_num_seqs_full"));
}

RunFacts queued_run(double queue_share) {
  RunFacts f = calm_run();
  seg(f, Segment::kEngineQueue).share_of_ttft = queue_share;
  seg(f, Segment::kPrefill).share_of_ttft = 1 - queue_share;
  return f;
}

TEST(Diagnosis, EngineQueueingFiresFromHalfTheTtftAndNamesTheLimit) {
  EXPECT_FALSE(finding(diagnose(queued_run(0.49)), "engine_queueing"));
  RunFacts f = queued_run(0.5);
  const std::optional<Finding> q = finding(diagnose(f), "engine_queueing");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->text,
            "requests wait for the engine: its queue is 50% of the mean TTFT (5.0 of 40.0 ms)");
  f.replicas[0].admission.at_seq_cap_s = 15.0;
  f.replicas[0].admission.at_kv_limit_s = 10.0;
  EXPECT_NE(finding(diagnose(f), "engine_queueing")->text.find(", held back by max_num_seqs"),
            std::string::npos);
  f.replicas[0].admission.at_seq_cap_s = 0.0;
  f.replicas[0].busy_s = 99;
  EXPECT_NE(finding(diagnose(f), "engine_queueing")->text.find(", held back by the KV cache"),
            std::string::npos);
  f.replicas[0].admission.at_kv_limit_s = 0.0;
  EXPECT_NE(finding(diagnose(f), "engine_queueing")->text.find("the GPU is 99% busy"),
            std::string::npos);
}

TEST(Diagnosis, LongPrefillNeedsHalfTheTtftAndAQuarterSecond) {
  RunFacts f = calm_run();  // prefill 87.5% of a 40 ms TTFT: short prompts, not a finding
  EXPECT_FALSE(finding(diagnose(f), "long_prefill"));
  f.summary.ttft.mean_s = 0.25;
  f.summary.ttft.p50_s = 0.25;
  f.summary.ttft.p99_s = 0.30;
  seg(f, Segment::kPrefill).share_of_ttft = 0.5;
  seg(f, Segment::kPrefill).mean_s = 0.125;
  const std::optional<Finding> p = finding(diagnose(f), "long_prefill");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->text,
            "the first token waits on the prefill: it is 50% of the mean TTFT (125.0 of 250.0 "
            "ms) at 512 prompt tokens on average");
  seg(f, Segment::kPrefill).share_of_ttft = 0.49;
  EXPECT_FALSE(finding(diagnose(f), "long_prefill"));
  seg(f, Segment::kPrefill).share_of_ttft = 0.5;
  f.summary.ttft.mean_s = 0.249;
  EXPECT_FALSE(finding(diagnose(f), "long_prefill"));
}

TEST(Diagnosis, TtftTailFiresAtThreeTimesTheMedianAndNamesTheWorstSegment) {
  RunFacts f = calm_run();
  f.summary.ttft.p99_s = 0.119;  // 2.975x
  EXPECT_FALSE(finding(diagnose(f), "ttft_tail"));
  f.summary.ttft.p99_s = 0.120;
  seg(f, Segment::kEngineQueue).p99_s = 0.090;  // above the prefill's 60 ms
  const std::optional<Finding> t = finding(diagnose(f), "ttft_tail");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->text,
            "TTFT p99 is 3.0x its p50 (120.0 vs 40.0 ms): requests queue in front of the engine, "
            "from bursts or more load than it serves (engine_queue p99 90.0 ms)");
  EXPECT_TRUE(cites(*t, "summary.where_time_went.segments.engine_queue.p99_ms"));
  seg(f, Segment::kEngineQueue).p99_s = 0.010;
  f.replicas[0].preemptions = 5;
  EXPECT_EQ(finding(diagnose(f), "ttft_tail")->text,
            "TTFT p99 is 3.0x its p50 (120.0 vs 40.0 ms): head-of-line prefills: long prompts "
            "hold up the step (prefill p99 60.0 ms), and 5 preemptions recompute their prompts");
  seg(f, Segment::kPreModel).p99_s = 0.100;
  EXPECT_NE(finding(diagnose(f), "ttft_tail")->text.find("the pre_model segment's own tail"),
            std::string::npos);
  seg(f, Segment::kRetry).p99_s = 2.0;
  EXPECT_NE(finding(diagnose(f), "ttft_tail")
                ->text.find("retried requests wait out failed attempts and backoff (retry p99"),
            std::string::npos);
}

// A service run whose pre-model stage takes `pre_model_share` of E2E; the model the rest.
RunFacts service_run(double pre_model_share) {
  RunFacts f = calm_run();
  seg(f, Segment::kPreModel) = {0.7, 0.7, 1.0, 1.2, pre_model_share, 0.8};
  seg(f, Segment::kEngineQueue).share_of_e2e = 0.01;
  seg(f, Segment::kPrefill).share_of_e2e = 0.05;
  seg(f, Segment::kDecode).share_of_e2e = 0.94 - pre_model_share;
  return f;
}

TEST(Diagnosis, ModelShareBelowHalfNamesTheDominantSegment) {
  const std::optional<Finding> m = finding(diagnose(service_run(0.55)), "model_share_small");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->text,
            "the model is 45.0% of E2E: pre_model takes 55.0% (700.0 ms mean), so a faster GPU "
            "moves E2E by less than half its speed-up");
  EXPECT_TRUE(cites(*m, "summary.where_time_went.segments.pre_model.share_of_e2e"));
  EXPECT_FALSE(finding(diagnose(service_run(0.44)), "model_share_small"));  // model 56%
  // Engine-only runs have nothing above the model to blame.
  RunFacts engine_only = calm_run();
  seg(engine_only, Segment::kDecode).share_of_e2e = 0.3;
  EXPECT_FALSE(finding(diagnose(engine_only), "model_share_small"));
}

TEST(Diagnosis, RunWithoutCompletedRequestsSaysSoInsteadOfHealthy) {
  const std::vector<Finding> d = diagnose(RunFacts{});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].code, "no_requests");
}

TEST(Diagnosis, JsonListsCodeTextAndEvidenceWithNullForUnknown) {
  RunFacts f = calm_run();
  f.run_s = 0;
  const nlohmann::json j = diagnosis_json(diagnose(f));
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["code"], "healthy");
  EXPECT_TRUE(j[0]["text"].is_string());
  bool saw_null = false;
  for (const nlohmann::json& e : j[0]["evidence"]) {
    EXPECT_TRUE(e["metric"].is_string());
    if (e["metric"] == "gpu_busy") saw_null = e["value"].is_null();
  }
  EXPECT_TRUE(saw_null);
}

TEST(Diagnosis, PrintsAWhyBlockOneLinePerFinding) {
  RunFacts f = with_station(0.99, 10);
  f.summary.time.failures[static_cast<size_t>(FailureCause::kTimedOut)] = 5;
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  print_diagnosis(out, diagnose(f));
  std::fclose(out);
  const std::string printed(buffer, size);
  std::free(buffer);
  EXPECT_EQ(printed.rfind("  why\n  - station_saturated: gateway is saturated", 0), 0u) << printed;
  EXPECT_NE(printed.find("\n  - timed_out: 5 of 100 requests (5.0%) timed out"), std::string::npos);
}

}  // namespace
}  // namespace servesim
