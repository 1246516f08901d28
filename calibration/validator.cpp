#include "calibration/validator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "calibration/speed_probe.h"
#include "models/calibrated_cost_model.h"
#include "models/config_error.h"
#include "sim/percentile.h"
#include "sim/result_writer.h"

namespace servesim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double relative_error(double engine, double simulated) {
  if (!std::isfinite(engine) || !std::isfinite(simulated) || engine == 0) return kNaN;
  return simulated / engine - 1;
}

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
}

MetricComparison row(std::string metric, std::string unit, double engine, double simulated) {
  MetricComparison r;
  r.metric = std::move(metric);
  r.unit = std::move(unit);
  r.engine = engine;
  r.simulated = simulated;
  return r;
}

// One run's rows: engine and simulated values only.
std::vector<MetricComparison> compare_one(const MetricsSummary& e, const MetricsSummary& s) {
  std::vector<MetricComparison> rows;
  auto latency = [&](const char* name, const LatencyStats& le, const LatencyStats& ls) {
    const std::pair<const char*, double LatencyStats::*> pcts[] = {{"p50", &LatencyStats::p50_s},
                                                                   {"p90", &LatencyStats::p90_s},
                                                                   {"p99", &LatencyStats::p99_s}};
    for (const auto& [pct, field] : pcts) {
      rows.push_back(row(std::string(name) + "_" + pct, "ms", 1e3 * le.*field, 1e3 * ls.*field));
    }
  };
  latency("ttft", e.ttft, s.ttft);
  latency("tpot", e.tpot, s.tpot);
  latency("itl", e.itl, s.itl);
  latency("e2e", e.e2e, s.e2e);
  rows.push_back(row("request_throughput", "req/s", e.request_throughput, s.request_throughput));
  rows.push_back(row("output_throughput", "tok/s", e.output_throughput, s.output_throughput));
  rows.push_back(
      row("total_token_throughput", "tok/s", e.total_token_throughput, s.total_token_throughput));
  return rows;
}

// Each run's steps priced by `costs` of the same index.
StepCheck check_steps(const std::vector<EngineServeResult>& runs,
                      const std::vector<std::unique_ptr<CalibratedCostModel>>& costs) {
  std::vector<double> ratios, errors;
  for (size_t r = 0; r < runs.size(); ++r) {
    for (const ServedStep& step : runs[r].steps) {
      const double predicted = costs[r]->predict(step.shape).total_s;
      if (!(predicted > 0) || !(step.seconds > 0)) continue;
      ratios.push_back(step.seconds / predicted);
      errors.push_back(std::abs(predicted / step.seconds - 1));
    }
  }
  StepCheck c;
  c.steps = static_cast<int64_t>(ratios.size());
  if (ratios.empty()) return c;
  c.median_ratio = percentile(ratios, 50);
  for (double e : errors) c.mean_error += e / static_cast<double>(errors.size());
  c.p90_error = percentile(errors, 90);
  return c;
}

}  // namespace

std::vector<MetricComparison> compare_summaries(const std::vector<MetricsSummary>& engine_runs,
                                                const std::vector<MetricsSummary>& simulated_runs,
                                                const MetricsSummary& raw_simulated) {
  std::vector<std::vector<MetricComparison>> per_run;
  for (size_t r = 0; r < engine_runs.size(); ++r) {
    per_run.push_back(compare_one(engine_runs[r], simulated_runs[r]));
  }
  const std::vector<MetricComparison> raw = compare_one(engine_runs.front(), raw_simulated);
  std::vector<MetricComparison> rows = per_run.front();
  // The median of the finite values; NaN when none (a run that completed no request).
  auto median = [](const std::vector<double>& v, double* spread) {
    std::vector<double> finite;
    for (double x : v) {
      if (std::isfinite(x)) finite.push_back(x);
    }
    if (spread != nullptr) *spread = 0;
    if (finite.empty()) return kNaN;
    const double m = percentile(finite, 50);
    const auto [lo, hi] = std::minmax_element(finite.begin(), finite.end());
    if (spread != nullptr && m > 0) *spread = (*hi - *lo) / m;
    return m;
  };
  for (size_t k = 0; k < rows.size(); ++k) {
    MetricComparison& row = rows[k];
    std::vector<double> simulated;
    row.engine_runs.clear();
    for (const auto& run : per_run) {
      row.engine_runs.push_back(run[k].engine);
      simulated.push_back(run[k].simulated);
    }
    row.engine = median(row.engine_runs, &row.engine_spread);
    row.simulated = median(simulated, nullptr);
    row.error = relative_error(row.engine, row.simulated);
    row.raw_simulated = raw[k].simulated;
    row.raw_error = relative_error(row.engine, row.raw_simulated);
  }
  return rows;
}

nlohmann::json ValidationReport::to_json() const {
  nlohmann::json metrics = nlohmann::json::array();
  for (const MetricComparison& r : rows) {
    nlohmann::json runs = nlohmann::json::array();
    for (double v : r.engine_runs) runs.push_back(number_or_null(v));
    metrics.push_back({{"metric", r.metric},
                       {"unit", r.unit},
                       {"engine", number_or_null(r.engine)},
                       {"engine_runs", runs},
                       {"engine_spread", number_or_null(r.engine_spread)},
                       {"simulated", number_or_null(r.simulated)},
                       {"error", number_or_null(r.error)},
                       {"raw_simulated", number_or_null(r.raw_simulated)},
                       {"raw_error", number_or_null(r.raw_error)}});
  }
  nlohmann::json engine = nlohmann::json::array();
  for (size_t r = 0; r < engine_runs.size(); ++r) {
    engine.push_back({{"summary", summary_json(engine_runs[r].summary)},
                      {"replica", replica_json(engine_runs[r].engine)},
                      {"wall_s", engine_runs[r].wall_s},
                      {"speed", run_speed[r]},
                      {"simulated_at_speed", summary_json(simulated_runs[r].summary)}});
  }
  return {{"scenario", scenario},
          {"profile", profile},
          {"profiled_model", profiled_model},
          {"backend", backend},
          {"served_model", served_model},
          {"transferred", transferred},
          {"kv_blocks", kv_blocks},
          {"extrapolated_steps", extrapolated_steps},
          {"comparison", metrics},
          {"step_check",
           {{"steps", step_check.steps},
            {"median_measured_over_predicted", step_check.median_ratio},
            {"mean_error", step_check.mean_error},
            {"p90_error", step_check.p90_error}}},
          {"speed_probe", {{"enabled", speed_probed}, {"probes", probes}}},
          {"engine", {{"runs", engine}}},
          {"simulated",
           {{"summary", summary_json(simulated.summary)},
            {"fingerprint", simulated.fingerprint},
            {"simulated_s", simulated.simulated_s}}}};
}

ValidationReport validate_profile(const Scenario& scenario, const ValidationOptions& o) {
  if (o.runs < 1) throw ConfigError("calibrate validate: --runs must be >= 1");
  const CalibrationProfile profile = load_profile(o.profile_path);
  // The engine serves on the backend the profile measured: a cuda profile needs a CUDA build
  // and a device, which EngineServer checks with a one-line error.
  EngineServeOptions engine = o.engine;
  engine.backend = profile.backend == "cuda" ? Backend::kCuda : Backend::kCpu;
  const EngineServer server(scenario.config, engine);

  SimulationConfig sim_config = scenario.config;
  sim_config.profile = std::make_shared<const CalibrationProfile>(profile);
  sim_config.calibrated = {.extrapolate = o.extrapolate, .transfer = o.transfer};
  sim_config.engine.num_gpu_blocks_override = server.scheduler_config().num_gpu_blocks;
  if (o.engine.max_requests > 0) {
    sim_config.workload.num_requests =
        std::min<uint64_t>(sim_config.workload.num_requests == 0 ? o.engine.max_requests
                                                                 : sim_config.workload.num_requests,
                           o.engine.max_requests);
  }
  Simulation simulation(sim_config);  // before the engine runs: a bad profile fails fast

  ValidationReport report;
  report.scenario = scenario.name;
  report.profile = o.profile_path;
  report.profiled_model = profile.model;
  report.backend = profile.backend;
  report.served_model = scenario.config.model.name;
  report.transferred = profile.model != scenario.config.model.name;
  report.kv_blocks = server.scheduler_config().num_gpu_blocks;

  // Probed before the first run, between runs and after the last; a run's speed is the mean
  // of the probes either side of it.
  std::optional<SpeedProbe> probe;
  if (o.speed_probe) probe.emplace(profile);
  report.speed_probed = probe.has_value();
  Observer quiet;
  std::vector<MetricsSummary> engine_summaries;
  if (probe) report.probes.push_back(probe->measure());
  for (int run = 0; run < o.runs; ++run) {
    report.engine_runs.push_back(server.run(quiet));
    engine_summaries.push_back(report.engine_runs.back().summary);
    if (probe) report.probes.push_back(probe->measure());
    report.run_speed.push_back(probe ? (report.probes[static_cast<size_t>(run)] +
                                        report.probes[static_cast<size_t>(run) + 1]) /
                                           2
                                     : 1.0);
  }
  report.simulated = simulation.run(quiet);
  report.extrapolated_steps = report.simulated.extrapolated_steps;
  std::vector<MetricsSummary> simulated_summaries;
  std::vector<std::unique_ptr<CalibratedCostModel>> costs;
  for (const double speed : report.run_speed) {
    SimulationConfig at_speed = sim_config;
    at_speed.calibrated.time_scale = speed;
    report.simulated_runs.push_back(speed == 1.0 ? report.simulated
                                                 : Simulation(at_speed).run(quiet));
    simulated_summaries.push_back(report.simulated_runs.back().summary);
    // Priced without the range check: Simulation already enforced it on the simulated steps.
    costs.push_back(std::make_unique<CalibratedCostModel>(
        profile, scenario.config.model, scenario.config.parallel,
        CalibratedOptions{.extrapolate = true, .transfer = true, .time_scale = speed}));
  }
  report.rows = compare_summaries(engine_summaries, simulated_summaries, report.simulated.summary);
  report.step_check = check_steps(report.engine_runs, costs);
  return report;
}

}  // namespace servesim
