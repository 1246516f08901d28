#include "cli/sweep_command.h"

#include <filesystem>
#include <iostream>

#include "cli/interrupt_flag.h"
#include "cli/process_work_share.h"
#include "models/config_error.h"
#include "models/json_file.h"
#include "plan/sweep.h"
#include "sim/metrics/atomic_file.h"

namespace servesim {

CLI::App* add_sweep_command(CLI::App& app, SweepCommandOptions& options) {
  CLI::App* cmd = app.add_subcommand("sweep", "Simulate a scenario over a grid of settings");
  cmd->add_option("scenario", options.scenario, "Scenario file (JSON)")->required();
  cmd->add_option("--vary", options.vary,
                  "KEY=V1,V2,... or KEY=START:STOP:STEP, e.g. --vary engine.max_num_seqs=32,64 "
                  "(repeatable; the grid is the cartesian product)")
      ->required();
  cmd->add_option("--set", options.overrides, "Override a scenario key for every point");
  cmd->add_option("--threads", options.threads, "Worker threads (default: all cores)");
  cmd->add_option("--out", options.out_dir, "Write sweep.csv and sweep.json into this directory");
  cmd->add_flag("--json", options.json, "Print JSON instead of a table");
  cmd->add_flag("--csv", options.csv, "Print CSV instead of a table");
  return cmd;
}

namespace {

// "8 points", or "3 of 8 points ran (interrupted)" for a stopped sweep.
std::string points_line(const SweepReport& report) {
  if (report.complete()) return std::to_string(report.points.size()) + " points";
  return std::to_string(report.points.size()) + " of " + std::to_string(report.grid_points) +
         " points ran (interrupted)";
}

int run(const SweepCommandOptions& options, WorkShare& share) {
  if (options.json && options.csv) throw ConfigError("sweep: give --json or --csv, not both");
  if (options.threads < 0) throw ConfigError("--threads must be >= 1 (or 0 for all cores)");
  SweepOptions sweep;
  for (const std::string& spec : options.vary) sweep.axes.push_back(parse_sweep_axis(spec));
  sweep.overrides = options.overrides;
  sweep.threads = options.threads;
  Catalog catalog;
  if (!options.out_dir.empty() && share.rank() == 0) {
    require_writable_directory(options.out_dir, "--out");
  }
  // Ctrl-C: points not started are skipped, running ones stopped and left out; what finished
  // is written and printed, marked incomplete. A second Ctrl-C kills (InterruptFlag).
  const InterruptFlag interrupt;
  SweepControl control;
  control.should_stop = [&interrupt] { return interrupt.raised(); };
  const SweepReport report = run_sweep(options.scenario, sweep, catalog, share, control);
  const int status = report.complete() ? 0 : 130;  // 128 + SIGINT, the shell's convention
  if (share.rank() != 0) return status;
  if (!options.out_dir.empty()) {
    const std::filesystem::path dir(options.out_dir);
    write_file_atomically((dir / "sweep.csv").string(), report.to_csv());
    write_file_atomically((dir / "sweep.json").string(), json_text(report.to_json()) + "\n");
  }
  if (options.json) {
    std::cout << json_text(report.to_json()) << "\n";
  } else if (options.csv) {
    std::cout << report.to_csv();
  } else {
    std::cout << report.scenario << ": " << points_line(report) << "\n" << report.to_table();
  }
  if (!report.complete()) {
    std::cerr << "interrupted: the results are those of the " << report.points.size() << " of "
              << report.grid_points << " points that finished\n";
  }
  return status;
}

}  // namespace

int run_sweep_command(const SweepCommandOptions& options) {
  return run_with_process_work_share([&options](WorkShare& share) { return run(options, share); });
}

}  // namespace servesim
