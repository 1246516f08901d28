// `servesim compare A B [C ...] [--json] [--plot FILE.png] [--max-error PCT [--metrics K,...]]`:
// reads result folders — any mix of simulated (`simulate --out`) and measured (`engine run
// --out`, `loadtest --out`) runs — and prints their metrics side by side with each run's
// relative difference against the first (sim/metrics/run_comparison.h); --plot draws the
// TTFT, TPOT, ITL and E2E CDFs overlaid (cli/cdf_plot.h). With --max-error the exit status
// is kExitBeyondMaxError when a compared metric of a run differs from the first run's by
// more than PCT percent, for CI. Output depends only on the folders and the flags.
// Not thread-safe (CLI process).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace servesim {

// Exit status when a metric is beyond --max-error (2 stays "bad input", as for every command).
inline constexpr int kExitBeyondMaxError = 3;

struct CompareCommandOptions {
  std::vector<std::string> folders;  // the first is the reference
  bool json = false;
  std::string plot_path;                // PNG; empty: no plot
  std::optional<double> max_error_pct;  // percent
  std::vector<std::string> metrics;     // keys to compare (and check); empty: all
};

CLI::App* add_compare_command(CLI::App& app, CompareCommandOptions& options);

// Throws ConfigError for bad input; returns the process exit code otherwise.
int run_compare_command(const CompareCommandOptions& options);

}  // namespace servesim
