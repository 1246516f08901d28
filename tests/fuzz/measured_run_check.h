// What a MeasuredRun read by any of the measured-run readers (vllm bench results, timing traces,
// published rows) must hold for `calibrate serving` to replay and fit it, checked by the fuzz
// targets after a successful read: finite, non-negative latencies in order, lengths and counts
// that fit, a summary whose figures are finite where set. A broken invariant prints which one
// and aborts, which libFuzzer reports as a finding with the input.
// Stateless; thread-safety: none needed.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "calibration/measured/measured_run.h"

namespace servesim::fuzz {

[[noreturn]] inline void broken(const char* what) {
  std::fprintf(stderr, "measured-run invariant broken: %s\n", what);
  std::abort();
}

inline void expect(bool holds, const char* what) {
  if (!holds) broken(what);
}

// NaN (not measured) or a finite value >= 0.
inline bool unset_or_non_negative(double v) {
  return std::isnan(v) || (std::isfinite(v) && v >= 0);
}

inline void check_latency(const LatencyStats& s) {
  for (double v : {s.mean_s, s.p50_s, s.p90_s, s.p95_s, s.p99_s, s.max_s}) {
    expect(unset_or_non_negative(v), "a summary latency is negative or infinite");
  }
}

inline void check_request(const MeasuredRequest& r, bool arrivals) {
  expect(r.prompt_tokens >= 0 && r.output_tokens >= 0, "a negative token count");
  expect(arrivals ? std::isfinite(r.arrival_s) && r.arrival_s >= 0 : std::isnan(r.arrival_s),
         "an arrival that is neither unset for all nor finite and >= 0");
  if (!r.ok) {
    expect(r.output_tokens == 0 && r.itl_s.empty(), "a failed request with output");
    return;
  }
  expect(std::isfinite(r.ttft_s) && r.ttft_s >= 0, "an ok request's TTFT not finite and >= 0");
  expect(std::isfinite(r.e2e_s) && r.e2e_s >= r.ttft_s, "an ok request's E2E below its TTFT");
  for (double gap : r.itl_s) expect(std::isfinite(gap) && gap >= 0, "a negative or infinite ITL");
  expect(!arrivals || std::isfinite(r.arrival_s + r.e2e_s), "a finish time that overflows");
}

inline void check_summary(const MetricsSummary& s) {
  expect(s.completed <= s.requests && s.rejected <= s.requests &&
             s.timed_out <= s.requests - s.rejected,
         "summary counts that do not add up (an overflow?)");
  expect(std::isnan(s.duration_s) || (std::isfinite(s.duration_s) && s.duration_s >= 0),
         "a negative or infinite duration");
  for (double v : {s.request_throughput, s.input_throughput, s.output_throughput,
                   s.total_token_throughput, s.goodput}) {
    expect(unset_or_non_negative(v), "a throughput that is negative or infinite");
  }
  expect(std::isnan(s.error_rate) || (s.error_rate >= 0 && s.error_rate <= 1),
         "an error rate outside [0, 1]");
  for (const LatencyStats* l : {&s.ttft, &s.tpot, &s.itl, &s.e2e}) check_latency(*l);
}

inline void check_run(const MeasuredRun& run) {
  const bool arrivals = !run.requests.empty() && !std::isnan(run.requests.front().arrival_s);
  for (const MeasuredRequest& r : run.requests) check_request(r, arrivals);
  expect(arrivals == run.has_arrivals(), "has_arrivals() disagrees with the requests");
  check_summary(run.summary);
  expect(run.load.request_rate_per_s > 0 && run.load.burstiness > 0 &&
             std::isfinite(run.load.burstiness),
         "a load with a rate or burstiness <= 0");
  expect(!run.load.max_concurrency || *run.load.max_concurrency >= 1, "max_concurrency < 1");
  for (double n : {run.prompt_tokens_per_request, run.output_tokens_per_request}) {
    expect(std::isnan(n) || (std::isfinite(n) && n > 0), "a stated length not finite and > 0");
  }
}

}  // namespace servesim::fuzz
