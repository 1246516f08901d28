// ServingReport: what `servesim calibrate serving` tells the user — the fitted parameters
// against their start values and bounds, and for every run (held-out ones marked) each
// metric measured, simulated before the fit (the catalog defaults) and after it, with the
// errors, so the user sees what calibration bought on runs it never saw. The JSON is the
// report file; the text is what the command prints.
//
// Errors are simulated / measured - 1 (NaN where a side is missing). Plain values and
// stateless functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibration/serving/serving_fit.h"

namespace servesim {

struct ServingRunReport {
  std::string name;
  bool held_out = false;
  MetricsSummary measured;
  MetricsSummary before;  // simulated at the start parameters
  MetricsSummary after;   // simulated at the fitted parameters
};

struct ServingReport {
  ServingFit fit;
  std::vector<ServingRunReport> runs;  // every run, in input order
  double holdout_fraction = 0;
  // One line per run the fit should not be trusted on (e.g. more prefill than the GPUs' peak
  // gives: calibration/serving/prefill_demand.h); the caller's to fill.
  std::vector<std::string> warnings;
  // One line per run given but neither fitted nor held out (e.g. a published row whose source
  // records no concurrency: calibration/measured/run_provenance.h); the caller's to fill.
  std::vector<std::string> left_out;
};

// Simulates every case before and after the fit. REQUIRES: held_out.size() == cases.size().
ServingReport make_serving_report(const std::vector<ServingFitCase>& cases,
                                  const std::vector<bool>& held_out, const ServingFit& fit,
                                  double holdout_fraction, const ForEachCase& for_each = {});

// Mean and median of |error| over the runs (held-out ones, or the fitted ones) that measured
// the metric; NaN when none did. The median is the middle value (the mean of the two middle
// ones for an even count): a few far-off runs move the mean, not the median.
double mean_abs_error(const ServingReport& report, const ServingMetricSpec& metric, bool held_out,
                      bool after);
double median_abs_error(const ServingReport& report, const ServingMetricSpec& metric, bool held_out,
                        bool after);

nlohmann::json serving_report_json(const ServingReport& report);
std::string serving_report_text(const ServingReport& report);

}  // namespace servesim
