// `servesim loadtest URL --scenario FILE [options]`: plays a scenario's workload against an
// OpenAI-compatible endpoint (vLLM, SGLang, TGI, `servesim engine serve`) and reports what
// its clients saw in `servesim simulate`'s terms: the summary table, per-step summaries and
// the knee of a stepped run, and with --out the same requests.csv, timeseries.csv and
// summary.json as `simulate --out`, plus errors.csv (failed requests by cause) and
// server_metrics.csv (the server's /metrics, scraped once a second). Progress goes to stderr
// once a second unless --quiet. Ctrl-C stops the run and still writes what was measured,
// marked partial. Not thread-safe (CLI process).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace servesim {

struct LoadtestCommandOptions {
  std::string url;
  std::string scenario;
  std::vector<std::string> overrides;
  std::optional<uint64_t> seed;
  std::string endpoint = "/v1/completions";
  std::string model;
  std::string out_dir;
  size_t max_connections = 0;
  double timeout_s = 120;
  uint64_t max_requests = 0;
  double max_duration_s = 0;
  std::optional<double> warmup_s;
  double max_error_rate = 0.01;
  double scrape_interval_s = 1;
  bool quiet = false;
  bool json = false;
};

CLI::App* add_loadtest_command(CLI::App& app, LoadtestCommandOptions& options);

// Throws ConfigError for bad input; returns the process exit code otherwise (0 also for a
// run with failed requests: they are results, counted by cause).
int run_loadtest_command(const LoadtestCommandOptions& options);

}  // namespace servesim
