// `servesim simulate SCENARIO.json [--set path=value ...] [--seed N] [--out DIR] [--json]
// [--max-error-rate F] [--replay MEASURED]`:
// runs one scenario and prints what users would see (a table, or JSON), optionally writing
// per-request and time-series CSVs and summary.json into --out. A stepped workload gets a
// per-step table and its knee (sim/metrics/step_table.h). A progress bar goes to stderr
// when stderr is a terminal. --replay plays a measured run's requests (calibration/
// measured_run_reader.h) on the scenario's deployment instead of its workload. Not thread-safe
// (CLI process).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace servesim {

struct SimulateOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  std::optional<uint64_t> seed;
  std::string out_dir;
  bool json = false;
  double max_error_rate = 0.01;    // fraction; a stepped run's step failing more is its knee
  std::string replay;              // measured run whose requests replace the workload; "" none
  std::string speculative_config;  // vLLM --speculative-config JSON; "" keeps the scenario's
};

CLI::App* add_simulate_command(CLI::App& app, SimulateOptions& options);

// Throws ConfigError for bad input; returns the process exit code otherwise.
int run_simulate(const SimulateOptions& options);

}  // namespace servesim
