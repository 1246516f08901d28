// `servesim engine run SCENARIO.json [--set key=value ...] [--seed N] [--threads N]
// [--num-blocks N | --kv-cache-mib N] [--max-requests N] [--checkpoint F ...] [--force]
// [--out DIR] [--json] [--trace FILE] [--profile]`: serves the scenario's workload on the
// built-in engine in real time (engine/realtime/engine_server.h) and prints what `servesim
// simulate` prints for the same scenario — the same summary table, the same JSON keys, and
// with --out the same requests.csv, timeseries.csv and summary.json — so the two compare
// line by line. --trace writes the engine's per-step JSON lines (per-op times with
// --profile). Not thread-safe (CLI process).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace servesim {

struct EngineRunOptions {
  CLI::App* command = nullptr;  // the `engine run` subcommand, once added
  std::string scenario;
  std::vector<std::string> overrides;
  std::optional<uint64_t> seed;
  std::string backend = "cpu";
  std::vector<std::string> checkpoint;  // .safetensors shards; empty: seeded random weights
  int threads = 1;
  int64_t num_blocks = 0;    // KV blocks; 0: from kv_cache_mib or the default budget
  int64_t kv_cache_mib = 0;  // MiB; 0: default budget
  uint64_t max_requests = 0;
  bool force = false;
  std::string out_dir;
  std::string trace_path;
  bool profile = false;
  bool json = false;
  double max_error_rate = 0.01;    // fraction; a stepped run's step failing more is its knee
  std::string speculative_config;  // vLLM --speculative-config JSON (ngram); "" = the scenario's
};

// Adds `run` to the `engine` subcommand.
CLI::App* add_engine_run_command(CLI::App& engine, EngineRunOptions& options);

// Throws ConfigError for bad input; returns the process exit code otherwise.
int run_engine_run(const EngineRunOptions& options);

}  // namespace servesim
