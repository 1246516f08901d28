// RunComparison: two or more result folders (RunFolder) side by side — request counts,
// throughput, TTFT/TPOT/ITL/E2E mean and percentiles, error rate and goodput, each with its
// relative difference against the first run, the reference — and the setup keys in which each
// run differs from the reference (sim/metrics/setup_difference.h), as the table and JSON `servesim
// compare` prints, and the check behind `--max-error` (CI: fail when a run drifts).
//
// Relative difference: (value - reference) / |reference| x 100 %. Undefined (NaN) when either
// value is missing; when the reference is 0 it is 0 for a 0 and +/-infinity otherwise.
// Missing values (a run without ITL, goodput without SLOs, latencies of a run with no
// successful request) are NaN, never 0; the table prints them as "–", the JSON as null.
// Plain values and stateless functions; thread-safe.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sim/metrics/run_folder.h"

namespace servesim {

// One comparable metric: its key (for --metrics and JSON), label, unit and where in
// summary.json it comes from (scaled by `scale` into `unit`).
struct ComparedMetricSpec {
  std::string_view key;  // e.g. "ttft_p50"
  std::string_view label;
  std::string_view unit;
  std::string_view summary_key;  // RunFolder::value's key
  double scale;                  // summary value x scale = value in `unit`
};

// Every metric the comparison knows, in table order.
const std::vector<ComparedMetricSpec>& compared_metric_specs();

struct ComparedMetric {
  const ComparedMetricSpec* spec = nullptr;
  std::vector<double> values;          // one per run, in `unit`; NaN when missing
  std::vector<double> difference_pct;  // one per run vs run 0; [0] is 0 (or NaN if missing)
};

struct RunComparison {
  std::vector<const RunFolder*> runs;  // borrowed; runs[0] is the reference
  std::vector<ComparedMetric> metrics;
};

// REQUIRES: runs non-empty; `runs` outlives the result. `keys` picks metrics (table order
// kept); empty means all. Throws ConfigError naming an unknown key and the known ones.
RunComparison compare_runs(const std::vector<RunFolder>& runs,
                           const std::vector<std::string>& keys = {});

double relative_difference_pct(double value, double reference);

// A metric of a run that differs from the reference by more than the limit, or is missing
// while the metric was asked for by name.
struct ErrorLimitBreach {
  std::string metric;  // key
  size_t run = 0;      // index into RunComparison::runs, >= 1
  double value = 0.0;
  double reference = 0.0;
  double difference_pct = 0.0;  // NaN when a value is missing
};

// Every run's every compared metric against `max_error_pct`. Missing values breach only when
// `missing_breaches` (the user named the metrics): a gate must not pass on absent data.
std::vector<ErrorLimitBreach> check_max_error(const RunComparison& comparison, double max_error_pct,
                                              bool missing_breaches);

// The text table: a line per run (its path, clock, scenario, model, ...), a line per later run
// with the setup keys that differ from the reference's (when both have a "setup" record), then
// a row per metric with each run's value and, after the first, its difference.
void print_comparison(std::FILE* out, const RunComparison& comparison);

// {"reference", "runs": [...], "metrics": [{key, label, unit, values, difference_pct}]};
// missing and undefined numbers are null. A later run with a setup record to compare has
// "setup_differences" [{key, reference, value}] and "setup_keys_only_in_one".
nlohmann::json comparison_json(const RunComparison& comparison);

// One line saying which metric of which run broke the limit and by how much.
std::string describe_breach(const RunComparison& comparison, const ErrorLimitBreach& breach,
                            double max_error_pct);

}  // namespace servesim
