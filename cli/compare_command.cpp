#include "cli/compare_command.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "calibration/measured/measured_run_reader.h"
#include "calibration/measured/vllm_bench_result.h"
#include "cli/cdf_plot.h"
#include "models/config_error.h"
#include "models/json_file.h"
#include "sim/metrics/run_comparison.h"
#include "sim/metrics/run_folder.h"

namespace servesim {
namespace {

// ITL has no per-token times in requests.csv: its curve joins summary.json's percentiles.
CdfCurve itl_curve(const RunFolder& run) {
  CdfCurve curve;
  curve.from_percentiles = true;
  const std::pair<const char*, double> percentiles[] = {{"itl.p50_ms", 0.50},
                                                        {"itl.p90_ms", 0.90},
                                                        {"itl.p95_ms", 0.95},
                                                        {"itl.p99_ms", 0.99},
                                                        {"itl.max_ms", 1.00}};
  for (const auto& [key, fraction] : percentiles) {
    const double ms = run.value(key);
    if (!std::isnan(ms)) curve.points.push_back({ms, fraction});
  }
  return curve;
}

void write_plot(const std::string& path, const std::vector<RunFolder>& runs) {
  std::vector<CdfPanel> panels = {
      {"TTFT: time to first token", "TTFT (ms)", "fraction of requests", {}},
      {"TPOT: time per output token", "TPOT (ms)", "fraction of requests", {}},
      {"ITL: inter-token latency (p50, p90, p95, p99, max)", "ITL (ms)", "fraction of gaps", {}},
      {"E2E: end-to-end latency", "E2E (ms)", "fraction of requests", {}}};
  std::vector<std::string> legend;
  for (const RunFolder& run : runs) {
    legend.push_back(run.path + " (" + std::string(run.clock()) + ")");
    panels[0].curves.push_back({empirical_cdf(run.ttft_s, 1e3), false});
    panels[1].curves.push_back({empirical_cdf(run.tpot_s, 1e3), false});
    panels[2].curves.push_back(itl_curve(run));
    panels[3].curves.push_back({empirical_cdf(run.e2e_s, 1e3), false});
  }
  write_cdf_png(path, panels, legend);
}

nlohmann::json breaches_json(const std::vector<ErrorLimitBreach>& breaches,
                             const RunComparison& comparison) {
  nlohmann::json out = nlohmann::json::array();
  auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
  for (const ErrorLimitBreach& b : breaches) {
    out.push_back({{"metric", b.metric},
                   {"run", comparison.runs[b.run]->path},
                   {"value", number(b.value)},
                   {"reference", number(b.reference)},
                   {"difference_pct", number(b.difference_pct)}});
  }
  return out;
}

}  // namespace

CLI::App* add_compare_command(CLI::App& app, CompareCommandOptions& o) {
  CLI::App* cmd =
      app.add_subcommand("compare", "Put result folders (simulated or measured runs) side by side");
  cmd->add_option("folders", o.folders,
                  "Result folders written with --out (simulate, engine run, loadtest) or "
                  "measured-run files (vllm bench serve --save-result JSON, timing traces); the "
                  "first is the reference")
      ->required();
  cmd->add_flag("--json", o.json, "Print the comparison as JSON");
  cmd->add_option("--plot", o.plot_path,
                  "Write the TTFT, TPOT, ITL and E2E CDFs of every run overlaid into this PNG");
  cmd->add_option("--max-error", o.max_error_pct,
                  "Exit with status 3 when a metric of a run differs from the first run's by "
                  "more than this many percent")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--metrics", o.metrics,
                  "Compare (and check) only these metrics, e.g. ttft_p50,tpot_mean,e2e_p99")
      ->delimiter(',');
  return cmd;
}

int run_compare_command(const CompareCommandOptions& o) {
  if (o.folders.size() < 2) {
    throw ConfigError("compare: give two or more result folders (the first is the reference)");
  }
  std::vector<RunFolder> runs;
  // A file is a measured run (a vllm bench serve result, a timing trace; "FILE.json#N" one of
  // a file's appended results) read into a folder's shape.
  for (const std::string& folder : o.folders) {
    std::error_code ec;
    const bool file = std::filesystem::is_regular_file(folder, ec) ||
                      std::filesystem::is_regular_file(split_result_number(folder).first, ec);
    runs.push_back(file ? run_folder_from(read_measured_run(folder)) : read_run_folder(folder));
  }
  const RunComparison comparison = compare_runs(runs, o.metrics);
  if (!o.plot_path.empty()) write_plot(o.plot_path, runs);
  std::vector<ErrorLimitBreach> breaches;
  if (o.max_error_pct) {
    breaches = check_max_error(comparison, *o.max_error_pct, !o.metrics.empty());
  }
  if (o.json) {
    nlohmann::json j = comparison_json(comparison);
    if (o.max_error_pct) {
      j["max_error"] = {{"limit_pct", *o.max_error_pct},
                        {"breaches", breaches_json(breaches, comparison)}};
    }
    std::cout << json_text(j) << "\n";
  } else {
    print_comparison(stdout, comparison);
    if (!o.plot_path.empty()) std::printf("\nCDFs: %s\n", o.plot_path.c_str());
    if (o.max_error_pct && breaches.empty()) {
      std::printf("\nmax error: every compared metric within %g%% of %s\n", *o.max_error_pct,
                  runs.front().path.c_str());
    }
  }
  std::fflush(stdout);
  for (const ErrorLimitBreach& b : breaches) {
    std::fprintf(stderr, "compare: %s\n", describe_breach(comparison, b, *o.max_error_pct).c_str());
  }
  return breaches.empty() ? 0 : kExitBeyondMaxError;
}

}  // namespace servesim
