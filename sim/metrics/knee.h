// The knee of a stepped load test — the first step where the service stops meeting its
// targets — and the sample-size rule that says whether a step's percentiles can be trusted.
// Shared by `servesim simulate` and `servesim loadtest`, so a prediction and a measurement
// name their knee the same way.
//
// Knee: the first step whose TTFT, TPOT or E2E p99 breaks the scenario's SLO (the SLO limits
// are read as p99, as `servesim plan` reads them), or whose error rate passes a limit. The
// error rate is checked first: a step that refuses requests has broken whatever its latency.
// Steps without counted requests are not judged.
//
// Percentile stability: a step's q-quantile is called unstable when it rests on fewer than
// min_samples_for_percentile(q) = ceil(ln 0.025 / ln q) samples (about 3.7 / (1 - q)): below
// that even the largest sample is not a 97.5% upper confidence bound on the true quantile
// (P(every sample < the quantile) = q^n > 0.025), so the data cannot bound it from above —
// p50 needs 6 samples, p95 72, p99 368.
//
// Stateless functions and plain values; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/metrics/metrics.h"

namespace servesim {

struct Knee {
  int step = -1;       // 0-based; -1 when no step broke
  std::string reason;  // e.g. "TTFT p99 812.0 ms > SLO 500.0 ms"
};

// max_error_rate: the fraction of a step's counted requests that may fail.
Knee find_knee(const std::vector<MetricsSummary>& by_step, const SloSpec& slo,
               double max_error_rate);

// summary.json's "knee": {step (1-based), clients, reason}, or null when no step broke.
// REQUIRES: clients has an entry per step.
nlohmann::json knee_json(const Knee& knee, const std::vector<int>& clients);

// Samples a q-quantile (0 < q < 1) needs to be stable (see above).
uint64_t min_samples_for_percentile(double q);

// The percentiles the step table shows (50, 95, 99, as percent) that are unstable in a step:
// it has fewer latency samples than they need. The samples are the fewest of TTFT, TPOT and
// E2E (TPOT leaves out one-token answers); a step with none has no percentiles to judge.
uint64_t latency_samples(const MetricsSummary& step);
std::vector<int> unstable_percentiles(const MetricsSummary& step);

}  // namespace servesim
