// `servesim engine bench`: measures the built-in inference engine on this machine — prefill
// and decode tokens/s for each (batch, prompt length), next to the ceilings they are held to:
// the measured memory read bandwidth (decode streams every weight once per step) and the
// measured Eigen GEMM rate (prefill is GEMMs). Prints tables, or JSON with --json.
// `servesim engine run` serves a scenario in real time (cli/engine_run_command.h); `servesim
// engine serve` is an OpenAI-compatible HTTP server on the engine (cli/engine_serve_command.h).
// Not thread-safe (CLI process).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/engine_run_command.h"
#include "cli/engine_serve_command.h"

namespace servesim {

struct EngineCommandOptions {
  CLI::App* bench = nullptr;  // the `engine bench` subcommand, once added
  std::string model = "Llama-100M-bench";
  std::string backend = "cpu";
  std::vector<std::string> checkpoint;  // .safetensors shards; empty: seeded random weights
  int threads = 1;
  std::vector<int> prompt_lens = {512};
  int gen_len = 32;
  std::vector<int> batches = {1};
  int repeats = 3;
  uint64_t seed = 0;
  int64_t bandwidth_buffer_mib = 512;  // larger than any last-level cache
  int gemm_size = 1024;                // square GEMM of the rate measurement
  bool json = false;
  bool profile = false;       // time each op (clock reads on the CPU, CUDA events on a GPU)
  EngineRunOptions run;       // `engine run`
  ServeCommandOptions serve;  // `engine serve`
};

// Adds `engine` (with its `bench`, `run` and `serve` subcommands) to `app`.
CLI::App* add_engine_command(CLI::App& app, EngineCommandOptions& options);

// Throws ConfigError for bad input; returns the process exit code otherwise.
int run_engine_command(const EngineCommandOptions& options);

}  // namespace servesim
