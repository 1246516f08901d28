#include "calibration/profile/validator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "calibration/profile/speed_probe.h"
#include "engine/runtime/backend.h"
#include "models/calibrated_cost_model.h"
#include "models/config_error.h"
#include "sim/metrics/percentile.h"
#include "sim/metrics/result_writer.h"
#include "sim/service/service_spec.h"

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

StepCheck check_steps(const std::vector<EngineServeResult>& runs, const CostModel& cost) {
  std::vector<double> ratios, errors;
  for (const EngineServeResult& run : runs) {
    for (const ServedStep& step : run.steps) {
      const double predicted = cost.predict(step.shape).total_s;
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
                                                const MetricsSummary& simulated) {
  std::vector<std::vector<MetricComparison>> per_run;
  for (const MetricsSummary& e : engine_runs) per_run.push_back(compare_one(e, simulated));
  std::vector<MetricComparison> rows = per_run.front();
  for (size_t k = 0; k < rows.size(); ++k) {
    MetricComparison& row = rows[k];
    row.engine_runs.clear();
    std::vector<double> measured;  // a run that measured nothing (no request done) has NaN
    for (const auto& run : per_run) {
      row.engine_runs.push_back(run[k].engine);
      if (std::isfinite(run[k].engine)) measured.push_back(run[k].engine);
    }
    row.engine = kNaN;
    row.engine_spread = 0;
    if (!measured.empty()) {
      const auto [lo, hi] = std::minmax_element(measured.begin(), measured.end());
      row.engine = percentile(measured, 50);
      if (row.engine > 0) row.engine_spread = (*hi - *lo) / row.engine;
    }
    row.error = relative_error(row.engine, row.simulated);
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
                       {"error", number_or_null(r.error)}});
  }
  nlohmann::json engine = nlohmann::json::array();
  for (const EngineServeResult& run : engine_runs) {
    engine.push_back({{"summary", summary_json(run.summary)},
                      {"replica", replica_json(run.engine)},
                      {"wall_s", run.wall_s}});
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
  engine.backend = parse_backend(profile.backend);
  const EngineServer server(scenario.config, engine);

  SimulationConfig sim_config = scenario.config;
  sim_config.profile = std::make_shared<const CalibrationProfile>(profile);
  sim_config.calibrated = {.extrapolate = o.extrapolate, .transfer = o.transfer};
  sim_config.engine.num_gpu_blocks_override = server.scheduler_config().num_gpu_blocks;
  // The engine is measured in process (no HTTP, no API server), so the prediction it is held
  // against is the engine alone, whatever the scenario's service block says.
  sim_config.service = ServiceSpec{};
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

  // Probed before the first run and after each.
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
  }
  report.simulated = simulation.run(quiet);
  report.extrapolated_steps = report.simulated.extrapolated_steps;
  report.rows = compare_summaries(engine_summaries, report.simulated.summary);
  // Priced without the range check: Simulation already enforced it on the simulated steps.
  const CalibratedCostModel cost(profile, scenario.config.model, scenario.config.parallel,
                                 {.extrapolate = true, .transfer = true});
  report.step_check = check_steps(report.engine_runs, cost);
  return report;
}

}  // namespace servesim
