// `servesim memory [deployment flags] [--json]`: the per-GPU memory budget and KV-cache
// capacity of a deployment, as vLLM computes them at start-up (models/memory_plan.h).
// `--from-log vllm.log`: reads a vLLM start-up log (calibration/measured/vllm_startup_log.h), takes
// the model, parallelism, dtypes, max_model_len, utilization, batch limits, version and GPU
// total from it unless a flag sets them (flags win), and prints servesim's budget beside the
// log's, term by term; `--fit` adds the non-torch / activation / CUDA-graph terms that make
// servesim's KV figure match the log, as engine JSON keys. Not thread-safe (CLI process).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/deployment_options.h"

namespace servesim {

struct MemoryCommandOptions {
  DeploymentOptions deployment;
  bool json = false;
  std::string from_log;  // empty: no log
  bool fit = false;
  CLI::App* command = nullptr;  // to ask which flags were given
};

CLI::App* add_memory_command(CLI::App& app, MemoryCommandOptions& options);

// Throws ConfigError for bad input; returns the process exit code otherwise.
int run_memory_command(const MemoryCommandOptions& options);

}  // namespace servesim
