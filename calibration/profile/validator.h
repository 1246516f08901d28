// Validator: `servesim calibrate validate` — serves a scenario's workload on the engine in
// real time (EngineServer) and simulates the same workload with a calibrated profile, then
// sets the two side by side: TTFT, TPOT, ITL and E2E at p50/p90/p99 and the throughputs,
// each with the simulator's relative error (simulated / measured - 1).
//
// The simulator runs with the engine's KV-block count (num_gpu_blocks_override), so both
// admit and preempt alike; the only thing the simulator predicts is how long each step takes.
// With a profile of another model ("transfer") the same comparison measures how well the
// fitted rates carry over to a model that was never profiled.
//
// A shared machine's speed drifts, so the engine may serve the workload several times
// (`runs`): each metric's engine value is the median of the runs, and the runs' spread is
// reported next to it — the noise floor the simulator's error should be read against. A
// SpeedProbe re-measures a few of the profile's own shapes before the runs and after each,
// so drift since profiling is reported (it is not corrected for: measured here, scaling the
// simulation by it did not bring the latencies closer). The report also prices every step
// the engine served (StepCheck): the simulator's latency errors compound queueing on top of
// step-time errors; this is the cost model alone.
//
// Stateless; one validation at a time per thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/realtime/engine_server.h"
#include "models/calibration_profile.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"

namespace servesim {

struct MetricComparison {
  std::string metric;  // "ttft_p50", "output_throughput", ...
  std::string unit;    // "ms" or "tok/s" or "req/s"
  double engine = 0;   // measured, in `unit` (the median of the runs)
  // Predicted, in `unit`: the median over runs of the simulation at each run's probed speed.
  double simulated = 0;
  double error = 0;          // simulated / engine - 1; NaN when the engine measured 0 or nothing
  double raw_simulated = 0;  // predicted at the profile's own speed (no probe correction)
  double raw_error = 0;      // raw_simulated / engine - 1
  std::vector<double> engine_runs;  // each run's measurement, in `unit`
  // (largest - smallest run) / engine: how much the engine disagreed with itself; 0 for one run.
  double engine_spread = 0;
};

// The profile's cost model on the steps the engine served.
struct StepCheck {
  int64_t steps = 0;        // priced
  double median_ratio = 0;  // median of measured / predicted step seconds
  double mean_error = 0;    // mean of |predicted / measured - 1|, fraction
  double p90_error = 0;     // 90th percentile of the same
};

struct ValidationReport {
  std::string scenario;  // name
  std::string profile;   // path
  std::string profiled_model;
  std::string backend;  // the engine's and the profile's: "cpu" or "cuda"
  std::string served_model;
  bool transferred = false;  // the profile is of another model
  int64_t kv_blocks = 0;     // both sides' KV-cache blocks
  int64_t extrapolated_steps = 0;
  std::vector<EngineServeResult> engine_runs;  // one per run, in order
  bool speed_probed = false;
  // Machine speed vs the profile's (reference step time now / then), probed before the first
  // run and after each: runs + 1 values when probed, none otherwise.
  std::vector<double> probes;
  SimulationResult simulated;
  std::vector<MetricComparison> rows;
  StepCheck step_check;  // over the steps of every run

  nlohmann::json to_json() const;
};

struct ValidationOptions {
  std::string profile_path;
  bool transfer = false;     // accept a profile of another model
  bool extrapolate = false;  // accept steps beyond the profile's range
  int runs = 1;              // times the engine serves the workload. REQUIRES: >= 1
  bool speed_probe = true;   // probe the machine's speed around the runs (SpeedProbe)
  EngineServeOptions engine;
};

// The engine serves on the profile's backend (options.engine.backend is ignored). Throws
// ConfigError for a bad profile, a cuda profile where CUDA is not built or no device is
// present, a profile of another model without transfer, or anything EngineServer or
// Simulation refuse.
ValidationReport validate_profile(const Scenario& scenario, const ValidationOptions& options);

// The comparison rows of the engine's runs (medians) against the simulation (also used by
// tests). REQUIRES: engine_runs not empty.
std::vector<MetricComparison> compare_summaries(const std::vector<MetricsSummary>& engine_runs,
                                                const MetricsSummary& simulated);

}  // namespace servesim
