// Reading a `vllm bench serve --save-result` JSON file into a MeasuredRun.
//
// Two layouts, told apart by their keys:
//   "vllm-bench"         vllm/benchmarks/serve.py (vLLM >= 0.10): carries endpoint_type and
//                        label, and with --save-detailed start_times and latencies per request
//   "vllm-bench-legacy"  benchmarks/benchmark_serving.py (before 0.10): per-request arrays
//                        always, no start_times, no latencies (E2E = TTFT + the ITLs)
// Keys read: model_id, backend (endpoint_type), request_rate (a number or "inf"), burstiness,
// max_concurrency, ramp_up_strategy; duration, completed, failed, total_input_tokens,
// total_output_tokens, request_throughput, request_goodput, output_throughput,
// total_token_throughput; {mean,median,std,pNN}_{ttft,tpot,itl,e2el}_ms; and per request
// input_lens, output_lens, ttfts, itls, latencies, start_times, errors (generated_texts and
// everything else are ignored). `--metadata` pairs the deployment is described by: tp /
// tensor_parallel_size, pp / pipeline_parallel_size (degrees), gpu, vllm_version / version. A
// request with error text, no TTFT or no output token failed (ok = false). The summary is the
// file's own aggregates (ms -> s; median -> p50, p100 -> max); what the file leaves out is computed
// from its requests (summary_of_requests).
//
// Several results in one file: `vllm bench serve --append-result` writes each run's JSON on a
// line of its own after the file's earlier ones. read_vllm_bench_results() gives them all, in
// file order, named "FILE#1", "FILE#2", ...; read_vllm_bench_result() takes one, so a file of
// several must be named with its run's number ("FILE#2"), else it is a one-line error saying
// how many it holds.
//
// Strict: truncated JSON, a key of the wrong type, per-request arrays of different lengths,
// negative latencies, a latency (or TTFT plus ITLs) or span of send times beyond 1e9 s, negative
// summary latencies or throughputs, a duration null or under 1 us, and counts beyond 1e15 are
// one-line ConfigErrors naming the file and the key (and index).
// Stateless; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "calibration/measured/measured_run.h"

namespace servesim {

// Throws ConfigError for a file that is not a well-formed vllm bench serve result. `path` may
// end in "#N" (1-based) to pick the N-th of a file's appended results.
MeasuredRun read_vllm_bench_result(const std::string& path);

// Every result of the file (one unless it was written with --append-result). Throws
// ConfigError naming the file and line of a result that is not well formed.
std::vector<MeasuredRun> read_vllm_bench_results(const std::string& path);

// Splits "FILE#N" into FILE and N (1-based); N = 0 when `path` has no such suffix.
std::pair<std::string, size_t> split_result_number(const std::string& path);

// The same for JSON already parsed; `origin` names it in errors and becomes `source`.
MeasuredRun vllm_bench_result_from_json(const nlohmann::json& result, const std::string& origin);

}  // namespace servesim
