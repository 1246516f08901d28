// Diagnosis: the run's "why" — a few findings that name the bottleneck from the run's own
// numbers (the summary, each replica's admission counters, each service station), each with
// a stable code, one sentence and the metrics it cites. Pure functions of a RunFacts: no
// simulation state, the same facts give the same findings and the same text, byte for byte
// (fixed number formats). Thread-safety: stateless.
//
// The rules, in the order findings are listed, and why each threshold:
//  repeated_prompts   the workload sends a benchmark's small dataset of prompts
//                     (workload.distinct_prompts) and more requests than it has prompts: the
//                     prefix cache serves the repeats, so every latency is a cached prompt's,
//                     not what new prompts would see. Listed first: it qualifies every number.
//  station_saturated  a station >= 95% busy with >= 1 job waiting on average. Queueing delay
//                     grows as 1/(1 - utilisation): at 95% a station has no headroom left,
//                     and a standing queue says arrivals exceed workers / service time (its
//                     capacity) rather than a burst passing through. The GPU then waits too:
//                     throughput stays flat however fast the model is.
//  client_bound       the load generator's machine (the station named "client",
//                     service.client.machine) >= 90% busy with >= 1 job waiting on average: a
//                     client whose threads cannot keep up delays every send and every chunk it
//                     timestamps, so the run measures the client, not the server. 90% rather
//                     than a server station's 95%: a load test's verdict must not be bent by its
//                     own tool, so less headroom is tolerated. Listed in the stations' place.
//  rate_limited, queue_full, timed_out, too_long (failed: no cause recorded)
//                     one per failure cause behind >= 1% of the requests: one request in a
//                     hundred failing is what users notice as "errors", not noise.
//  tenant_refused     with service.tenants: a tenant with >= 1% of its requests refused by one
//                     limit (the largest named: its own max_in_flight, requests_per_s or
//                     tokens_per_min, or the gateway's), the same share as the error rules.
//  tenant_slow        with two or more tenants: the slowest tenant's TTFT p50 >= 2 x the
//                     fastest's. Tenants share one engine, so their first tokens should come
//                     alike; twice as slow is a priority order or a quota at work, not noise.
//  slo_missed         SLOs are set and fewer than 90% of the requests met them: the usual
//                     target, so a run below it is not healthy whatever else it shows.
//  max_num_seqs_full  >= 10% of the replicas' busy time in steps that left requests waiting
//                     with max_num_seqs running.
//  token_budget_full  the same with the whole max_num_batched_tokens used.
//  kv_cache_full      the same waiting for KV blocks (neither cap hit), or preemptions >= 1
//                     per 100 completed requests. A limit that holds a tenth of the time is a
//                     phase of the run, not a passing peak; a preempted request recomputes
//                     its whole context, so one in a hundred already costs.
//  engine_queueing    the engine queue is >= 50% of the mean TTFT: most of the wait for the
//                     first token is in front of the engine, not in the model.
//  long_prefill       the prefill is >= 50% of the mean TTFT and that TTFT >= 250 ms (about
//                     where a pause is felt): the first token is slow because the prefill is,
//                     long prompts or a slow device; cites the mean prompt length.
//  ttft_tail          TTFT p99 >= 3 x p50. A healthy run's TTFT varies with the step a request
//                     lands in and its prompt (p99/p50 under 2); three times the median means
//                     something intermittent — a burst queueing, a preemption, a long prefill
//                     ahead in line, a variable stage — named from the largest segment p99.
//  model_share_small  with a service path, the model (engine queue + prefill + decode) < 50% of
//                     the mean E2E: a faster GPU would move E2E by less than half its speed-up;
//                     names the segment that dominates.
//  healthy            none of the above: says so with the headline numbers (no_requests when
//                     no request completed).
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/metrics/metrics.h"
#include "sim/metrics/replica_summary.h"
#include "sim/metrics/station_stats.h"
#include "sim/metrics/tenant_metrics.h"

namespace servesim {

// The station the client machine reports as (ServicePath::station_stats).
inline constexpr const char* kClientStationName = "client";

struct DiagnosisThresholds {
  double station_utilisation = 0.95;  // fraction of worker time busy
  double client_utilisation = 0.90;   // the client machine's fraction of thread time busy
  double station_mean_queue = 1.0;    // jobs waiting, time-averaged
  double error_share = 0.01;          // failed requests of one cause / requests
  double slo_attainment = 0.90;       // requests meeting every SLO / requests
  double limit_busy_share = 0.10;     // seconds held back by one limit / busy seconds
  double preemptions_per_request = 0.01;
  double engine_queue_ttft_share = 0.5;
  double prefill_ttft_share = 0.5;
  double long_prefill_ttft_s = 0.25;  // seconds of mean TTFT
  double ttft_tail_ratio = 3.0;       // p99 / p50
  double model_e2e_share = 0.5;
  double tenant_ttft_ratio = 2.0;  // slowest tenant's TTFT p50 / fastest's
};

// What the diagnosis reads; the producer copies it from its results.
struct RunFacts {
  MetricsSummary summary;
  std::vector<ReplicaSummary> replicas;
  std::vector<StationStats> stations;  // empty without a service path
  double run_s = 0;                    // seconds the run lasted: the GPU-busy denominator
  // engine.scheduling_policy "priority": tenants' priorities order the engine's queue (under
  // fcfs they do not, and tenant_slow says so rather than quoting them as the cause).
  bool priority_scheduling = false;
  // workload.distinct_prompts: the fixed prompts every request draws from; 0 = all new.
  int distinct_prompts = 0;
};

// One cited number: `metric` is its summary.json path where it has one (e.g.
// "summary.ttft.p99_ms", "service.stations[gateway].utilisation", "replicas[0].peak_kv_usage")
// or a derived name ("gpu_busy": the replicas' busy_s over run_s and replicas).
struct Evidence {
  std::string metric;
  double value = 0;
};

struct Finding {
  std::string code;  // stable id, one of the rule names above
  std::string text;  // one sentence
  std::vector<Evidence> evidence;
};

std::vector<Finding> diagnose(const RunFacts& facts, const DiagnosisThresholds& limits = {});
// The same with the run's tenants (service.tenants), which the tenant rules read.
std::vector<Finding> diagnose(const RunFacts& facts, const std::vector<TenantSummary>& tenants,
                              const DiagnosisThresholds& limits = {});

// summary.json's "diagnosis": [{code, text, evidence: [{metric, value}]}].
nlohmann::json diagnosis_json(const std::vector<Finding>& findings);
// The table's "why" block: one line per finding.
void print_diagnosis(std::FILE* out, const std::vector<Finding>& findings);

}  // namespace servesim
