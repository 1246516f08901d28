// `servesim sweep SCENARIO.json --vary KEY=V1,V2,... [--vary KEY=START:STOP:STEP ...]
// [--set path=value ...] [--threads N] [--out DIR] [--json | --csv]`: simulates every point
// of the grid in parallel and prints one row per point (a table, JSON or CSV); --out writes
// sweep.csv and sweep.json. Output is identical whatever --threads, and under mpirun, where
// the ranks share the points (cli/process_work_share.h) and rank 0 alone prints and writes.
// Not thread-safe (CLI).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace servesim {

struct SweepCommandOptions {
  std::string scenario;
  std::vector<std::string> vary;
  std::vector<std::string> overrides;
  int threads = 0;
  std::string out_dir;
  bool json = false;
  bool csv = false;
};

CLI::App* add_sweep_command(CLI::App& app, SweepCommandOptions& options);

// Throws ConfigError for bad input; returns the process exit code otherwise.
int run_sweep_command(const SweepCommandOptions& options);

}  // namespace servesim
