// MeasuredRun: one serving run measured on a real deployment, whatever wrote it — a `vllm bench
// serve --save-result` JSON (with or without --save-detailed), a `servesim loadtest --out`
// folder, or a per-request timing trace — reduced to what calibration and comparison need:
// how the load was issued, each request's lengths and latencies where the source has them, and
// the run's summary as the source reported it (or as computed from its requests).
//
// Readers (calibration/measured/measured_run_reader.h) fill it; `calibrate serving` replays it in
// the simulator (the recorded arrivals when there are any, else the recorded load shape with the
// recorded lengths in order) and fits the cost model to its summary.
//
// A plain value; thread-safety: none needed.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "calibration/measured/benchmark_protocol.h"
#include "models/dtype.h"
#include "sim/metrics/metrics.h"

namespace servesim {

struct MeasuredRequest {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

  // When the client sent it, seconds since the run's first send; NaN: the source does not say
  // (vllm bench result files record lengths and latencies, not send times).
  double arrival_s = kNone;
  int prompt_tokens = 0;      // tokens, as the server counted them where the source says
  int output_tokens = 0;      // tokens generated
  bool ok = true;             // false: the request failed (its latencies are NaN)
  double ttft_s = kNone;      // send to first token, seconds
  double e2e_s = kNone;       // send to last token, seconds
  std::vector<double> itl_s;  // gaps between consecutive output tokens, seconds; may be empty
};

// How the client issued the requests, as far as the source records it.
struct MeasuredLoad {
  static constexpr double kUnlimited = std::numeric_limits<double>::infinity();

  // At most this many requests in flight; requests go out in order as slots free
  // (`vllm bench serve --max-concurrency`, a loadtest's closed-loop clients). Unset: no cap.
  std::optional<int> max_concurrency;
  // Open-loop target rate, requests per second; infinity sends every request at once
  // (vllm bench's default `--request-rate inf`).
  double request_rate_per_s = kUnlimited;
  // Shape of the gamma-distributed gaps between sends (vllm bench `--burstiness`): 1 is
  // Poisson, < 1 burstier, > 1 more regular.
  double burstiness = 1.0;
  // The rate changed during the run (vllm bench `--ramp-up-strategy linear|exponential`, from
  // ramp_up_start_rps to ramp_up_end_rps): request_rate_per_s does not describe it, so a run
  // without send times cannot be replayed by its load. Added by the vllm bench reader.
  bool ramp_up = false;
};

struct MeasuredRun {
  std::string source;  // the file or folder it was read from; names the run in reports
  // "vllm-bench" (vllm bench serve, vLLM >= 0.10), "vllm-bench-legacy"
  // (benchmarks/benchmark_serving.py), "loadtest" (servesim loadtest --out), "trace".
  std::string format;
  std::string model;           // the model the source names ("" when it does not)
  std::string backend;         // what served it as the source names it ("vllm", "openai", ...; "")
  std::string gpu;             // the GPU the source names ("" when it does not)
  std::string engine_version;  // e.g. "0.12.0" ("" when the source does not say)
  int tensor_parallel_size = 0;    // 0: the source does not say (the caller's --tp applies)
  int pipeline_parallel_size = 0;  // 0: the source does not say
  // The precision the weights were served in where the source names it (published rows'
  // `precision`: fp8 for `--quantization fp8`); unset: the deployment's own.
  std::optional<DType> weight_dtype;
  MeasuredLoad load;
  // Fixed-length runs (`vllm bench serve --random-input-len`, published rows) state their
  // lengths; NaN: not stated (then requests or the summary's token totals say).
  double prompt_tokens_per_request = MeasuredRequest::kNone;  // tokens
  double output_tokens_per_request = MeasuredRequest::kNone;  // tokens
  // How the benchmark issued a run that records neither its request count nor its requests
  // (published rows: as the caller states it); unused for any other run.
  BenchmarkProtocol protocol;
  // In issue order. Empty when the source has aggregates only (a result saved without
  // --save-detailed): such a run can be fitted to its summary but not replayed request by
  // request.
  std::vector<MeasuredRequest> requests;
  // As the source reported it; where it reported nothing, computed from `requests`. Latencies
  // in seconds; NaN where neither says.
  MetricsSummary summary;

  // True when every request has a recorded send time (replay the arrivals exactly).
  bool has_arrivals() const;
};

// The summary of `requests` as servesim's metrics define it (sim/metrics/metrics.h): counts,
// tokens, throughputs over first send to last finish, TTFT/TPOT/E2E from each request's
// numbers, ITL from its gaps; failed requests count as rejected. Requests without a send time
// are taken as sent at 0 (the duration and throughputs are then the caller's to set). Queueing
// and the time breakdown are left unmeasured: no client sees them. Added for the readers
// (calibration/measured/measured_run_reader.h), which fill `summary` with it where a source's own
// aggregates are missing.
MetricsSummary summary_of_requests(const std::vector<MeasuredRequest>& requests);

}  // namespace servesim
