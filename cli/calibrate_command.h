// `servesim calibrate`: profile the engine over a grid of batch shapes, fit a calibrated cost
// model to the run, and validate the simulator with it against the engine serving a
// scenario in real time; `calibrate all` runs the three in sequence. docs/validation.md
// shows the workflow and the figures. Not thread-safe (CLI process).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "calibration/profile/profiler.h"
#include "cli/calibrate_serving_command.h"

namespace servesim {

struct CalibrateCommandOptions {
  CLI::App* profile = nullptr;  // the subcommands, once added
  CLI::App* fit = nullptr;
  CLI::App* validate = nullptr;
  CLI::App* all = nullptr;
  CLI::App* serving = nullptr;

  CalibrateServingOptions serving_options;  // `calibrate serving`

  ProfilerOptions profiler;
  bool no_progress = false;

  std::string run_dir;      // fit: the profile run directory
  std::string profile_out;  // fit: where the profile JSON goes
  std::string fit_model;    // fit: refuse a run of another model
  std::string fit_backend;  // fit: refuse a run of another backend
  int folds = 5;

  std::string profile_path;            // validate: the fitted profile
  std::string scenario;                // validate / all: the scenario file
  std::vector<std::string> overrides;  // --set key=value
  bool transfer = false;               // validate: allow another model than the profiled one
  bool extrapolate = false;            // validate: allow shapes beyond the profiled range
  std::string report;                  // validate: JSON report path
  std::optional<uint64_t> seed;        // validate: the scenario's seed unless given
  int64_t num_blocks = 0;              // validate: engine KV blocks; 0 = its default budget
  double max_error = 0;                // validate: exit 1 beyond this |error|; 0 = never
  int runs = 3;                        // validate: engine runs, medians reported
  bool no_speed_probe = false;         // validate: skip re-measuring the reference steps
  std::string all_out;                 // all: folder for run/, profile.json, validation.json
  bool json = false;
};

CLI::App* add_calibrate_command(CLI::App& app, CalibrateCommandOptions& options);

// Throws ConfigError for bad input; returns the process exit code otherwise.
int run_calibrate_command(const CalibrateCommandOptions& options);

}  // namespace servesim
