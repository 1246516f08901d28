// `servesim calibrate serving [SCENARIO] --measured RUN... [--model M --gpu G --tp N]`: fits the
// simulator's few physical parameters (calibration/serving/serving_parameters.h) to serving runs
// measured on a real deployment — vllm bench serve results, loadtest folders, timing traces,
// published rows — holds some runs out, and reports every metric measured vs simulated before
// and after the fit (calibration/serving/serving_report.h). With --log, the deployment's memory
// terms are first fitted to a vLLM start-up log (calibration/measured/memory_log_comparison.h), so
// the KV capacity the runs are simulated with is the one vLLM had. With --out it writes
// report.json, profile.json (the fitted values and their provenance) and scenario.json (the base
// scenario with the fitted values written in, ready for simulate, sweep and plan).
// docs/calibrate-serving.md. Not thread-safe (CLI process).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace servesim {

struct CalibrateServingOptions {
  std::string scenario;                // base deployment; empty: built from model/gpu/tp
  std::vector<std::string> overrides;  // --set key=value on the base scenario
  std::string model;                   // without a scenario: the deployment's model
  std::string gpu;                     // without a scenario: its GPU
  int tp = 1;                          // without a scenario: tensor parallel size
  int max_model_len = 0;               // without a scenario: tokens; 0 = the model's
  std::vector<std::string> measured;   // files or folders
  // How published rows were benchmarked (calibration/measured/benchmark_protocol.h).
  std::string published_protocol = "aiconfigurator";
  std::string log;  // a vLLM start-up log of the deployment; empty: none
  // What the published rows' source records of each run (calibration/measured/run_provenance.h);
  // empty: every row taken at its word.
  std::string provenance;
  double holdout = 0.25;         // fraction of the runs held out
  std::vector<std::string> fit;  // parameter names; empty: all that apply
  int max_iterations = 12;
  int threads = 0;  // simulations in parallel; 0 = every core
  std::string out_dir;
  bool json = false;
};

void add_calibrate_serving_command(CLI::App& calibrate, CalibrateServingOptions& options,
                                   CLI::App*& subcommand);

// Throws ConfigError for bad input; returns the process exit code otherwise.
int run_calibrate_serving_command(const CalibrateServingOptions& options);

}  // namespace servesim
