// `servesim simulate SCENARIO.json [--set path=value ...] [--seed N] [--out DIR] [--json]`:
// runs one scenario and prints what users would see (a table, or JSON), optionally writing
// per-request and time-series CSVs and summary.json into --out. A progress bar goes to stderr
// when stderr is a terminal. Not thread-safe (CLI process).
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
};

CLI::App* add_simulate_command(CLI::App& app, SimulateOptions& options);

// Throws ConfigError for bad input; returns the process exit code otherwise.
int run_simulate(const SimulateOptions& options);

}  // namespace servesim
