// fit_serving: `servesim calibrate serving`'s fit — the ServingParameters under which the
// simulator, replaying each measured run's workload on the stated deployment, comes closest
// to what the runs measured.
//
// Two stages, each a bounded least-squares fit (calibration/serving/bounded_least_squares.h), run
// in turn twice (the second round corrects the first for their coupling: prefills interrupt
// decodes, queues form behind slow steps):
//   decode   memory_efficiency, step_overhead_s, seq_overhead_s   to TPOT and ITL means
//   prefill  compute_efficiency, frontend_scale (and rtt_s, when   to TTFT mean and p99
//            named: fitted alone first in the first round)
// Staging keeps a metric the simulator misses for a reason no parameter stands for (e.g. TTFT
// of identical closed-loop clients that fall into lock-step cohorts, docs/validation.md) from
// dragging the parameters of the other side with it. E2E and throughput follow from both and
// are reported, not fitted.
// Residuals are log(simulated / measured), so a 10% miss weighs the same on a 50 ms and a 5 s
// metric, under a robust loss (kServingRobustScale); plus, per parameter, a weak pull towards its
// start value (kServingPriorWeight x log(x / x0)) that keeps what the runs cannot pin down (e.g.
// the frontend when every run has the same prompt length) at its documented default instead of
// wandering along a flat valley.
//
// Cases are independent simulations; `for_each` lets the caller run them in parallel (the
// CLI passes plan's parallel_for). Deterministic: the result does not depend on the order in
// which for_each runs the cases. Stateless; thread-safe if for_each is.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/serving/bounded_least_squares.h"
#include "calibration/serving/serving_parameters.h"
#include "sim/metrics/metrics.h"
#include "sim/run/simulation.h"

namespace servesim {

// Small next to a residual of a few percent times the tens of values a fit has: it decides only
// where the data are flat.
inline constexpr double kServingPriorWeight = 0.03;

// Residuals well beyond this (in log units: ~10%) count less and less (a Cauchy loss,
// c² log(1 + (r/c)²), r² near 0): a few runs from deployments that differed in ways the data
// do not record (docs/validation.md names such rows) are outvoted, not averaged in.
inline constexpr double kServingRobustScale = 0.1;

// A residual of a simulation that completed nothing, where log(simulated / measured) has no
// value: as if it were off by a factor of e^5 (~150).
inline constexpr double kServingMissPenalty = 5.0;

struct ServingFitCase {
  std::string name;         // the measured run (its file or folder)
  SimulationConfig config;  // the deployment with the run's workload, at the start parameters
  MetricsSummary measured;  // what the run measured; NaN where it did not
};

// One metric the fit matches or the report compares, read from a MetricsSummary.
struct ServingMetricSpec {
  std::string_view key;   // "ttft_mean", "tpot_p99", "output_throughput", ...
  std::string_view unit;  // "ms" or "tok/s" or "req/s"
  double scale;           // summary value (seconds, per second) x scale = value in unit
  double (*get)(const MetricsSummary&);
  bool fitted;         // part of the residuals (the others are reported only)
  ServingStage stage;  // the stage whose residuals it is in (when fitted)
};

// TTFT, TPOT, ITL, E2E at mean/p50/p99, then output and request throughput.
const std::vector<ServingMetricSpec>& serving_metric_specs();

using ForEachCase = std::function<void(size_t count, const std::function<void(size_t)>& body)>;

struct ServingFitOptions {
  std::vector<std::string> parameters;  // serving_parameter_names() entries; empty: all that apply
  LeastSquaresOptions solver;           // per stage and round
  ForEachCase for_each;                 // empty: one case after the other
};

struct ServingFit {
  std::vector<std::string> parameters;  // the fitted ones, in fit order
  ServingParameters initial;            // the cases' own (catalog defaults unless set)
  ServingParameters fitted;
  std::vector<bool> at_bound;  // per fitted parameter: ended within 1% of its range of a bound
  size_t residuals = 0;        // measured values matched (without the prior terms)
  double cost_before = 0;      // ½ Σ residual² over every fitted value, at the start
  double cost_after = 0;       // the same at the fitted parameters
  int iterations = 0;          // Levenberg–Marquardt steps over all stages and rounds
  int simulations = 0;         // simulations of each run, in all
};

// REQUIRES: cases non-empty, all built on one base (same start parameters). Throws
// ConfigError when a stage's runs measured fewer values than it has parameters to fit, or a
// simulation fails (the message names the run).
ServingFit fit_serving(const std::vector<ServingFitCase>& cases, const ServingFitOptions& options);

// Each case simulated at p; summaries in case order.
std::vector<MetricsSummary> simulate_serving_cases(const std::vector<ServingFitCase>& cases,
                                                   const ServingParameters& p,
                                                   const ForEachCase& for_each = {});

}  // namespace servesim
