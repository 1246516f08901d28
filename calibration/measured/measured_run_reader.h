// read_measured_run(): any measured serving run servesim reads, by what the path is —
//   a folder   `servesim loadtest --out` (or any result folder: sim/metrics/run_folder.h);
//              requests.csv gives each request's send time, lengths, TTFT and E2E, and
//              summary.json's setup the model and the load shape (its workload block)
//   .json      a `vllm bench serve --save-result` file (calibration/measured/vllm_bench_result.h)
//   .jsonl .csv a per-request timing trace (calibration/measured/timing_trace.h)
// run_folder_from(), which puts a MeasuredRun in the shape `servesim compare` reads, so a vllm
// bench result compares against a simulated folder directly; and replay_spec_from(), the run's
// requests as the simulator replays them (sim/workload/replay_source.h).
//
// Model check: given the model the caller says the run served, a run that names another is a
// ConfigError; names match ignoring case and any "org/" prefix ("Qwen/Qwen3-32B" is
// "qwen3-32b"). A run that names no model passes. Stateless; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "calibration/measured/measured_run.h"
#include "sim/metrics/run_folder.h"
#include "sim/workload/replay_source.h"

namespace servesim {

// Throws ConfigError (one line naming the path and what to give instead). A vllm bench file
// of several appended results is named with its run's number: "FILE.json#2".
MeasuredRun read_measured_run(const std::string& path, const std::string& expected_model = "");

// Every run at `path`: each result of a vllm bench file written with --append-result, else
// the one run read_measured_run() reads.
std::vector<MeasuredRun> read_measured_runs(const std::string& path,
                                            const std::string& expected_model = "");

// True when two model names denote the same model (see the model check above).
bool same_model(std::string_view a, std::string_view b);

// The run as a result folder: setup {source, format, model, backend, load, and gpu / tp / pp
// where the run names them} and summary.json's
// "summary" (summary_json of run.summary), the latencies of its ok requests sorted. A run
// without requests compares on its summary only (its CDFs are empty).
RunFolder run_folder_from(const MeasuredRun& run);

// The run's successful requests in send order with their lengths, under its load: the recorded
// send times when every request has one (with the run's concurrency cap, if any), else its
// cap, rate and burstiness. Failed requests are left out (their lengths are unknown). A run
// without per-request data but with fixed lengths (prompt/output_tokens_per_request) replays
// summary.completed requests of those lengths. Throws ConfigError when the run has neither
// (a vllm bench result saved without --save-detailed), no successful request, or a ramped-up
// rate without send times.
ReplaySpec replay_spec_from(const MeasuredRun& run);

}  // namespace servesim
