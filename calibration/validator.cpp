#include "calibration/validator.h"

#include <cmath>
#include <limits>

#include "models/config_error.h"
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

}  // namespace

std::vector<MetricComparison> compare_summaries(const MetricsSummary& e, const MetricsSummary& s) {
  std::vector<MetricComparison> rows;
  auto latency = [&](const char* name, const LatencyStats& le, const LatencyStats& ls) {
    const std::pair<const char*, double LatencyStats::*> pcts[] = {{"p50", &LatencyStats::p50_s},
                                                                   {"p90", &LatencyStats::p90_s},
                                                                   {"p99", &LatencyStats::p99_s}};
    for (const auto& [pct, field] : pcts) {
      const double a = 1e3 * le.*field;
      const double b = 1e3 * ls.*field;
      rows.push_back({std::string(name) + "_" + pct, "ms", a, b, relative_error(a, b)});
    }
  };
  latency("ttft", e.ttft, s.ttft);
  latency("tpot", e.tpot, s.tpot);
  latency("itl", e.itl, s.itl);
  latency("e2e", e.e2e, s.e2e);
  rows.push_back({"request_throughput", "req/s", e.request_throughput, s.request_throughput,
                  relative_error(e.request_throughput, s.request_throughput)});
  rows.push_back({"output_throughput", "tok/s", e.output_throughput, s.output_throughput,
                  relative_error(e.output_throughput, s.output_throughput)});
  rows.push_back({"total_token_throughput", "tok/s", e.total_token_throughput,
                  s.total_token_throughput,
                  relative_error(e.total_token_throughput, s.total_token_throughput)});
  return rows;
}

nlohmann::json ValidationReport::to_json() const {
  nlohmann::json metrics = nlohmann::json::array();
  for (const MetricComparison& r : rows) {
    metrics.push_back({{"metric", r.metric},
                       {"unit", r.unit},
                       {"engine", number_or_null(r.engine)},
                       {"simulated", number_or_null(r.simulated)},
                       {"error", number_or_null(r.error)}});
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
          {"engine",
           {{"summary", summary_json(engine.summary)},
            {"replica", replica_json(engine.engine)},
            {"wall_s", engine.wall_s}}},
          {"simulated",
           {{"summary", summary_json(simulated.summary)},
            {"fingerprint", simulated.fingerprint},
            {"simulated_s", simulated.simulated_s}}}};
}

ValidationReport validate_profile(const Scenario& scenario, const ValidationOptions& o) {
  const CalibrationProfile profile = load_profile(o.profile_path);
  if (profile.backend != "cpu") {
    throw ConfigError("calibrate validate: " + o.profile_path + " profiles the " + profile.backend +
                      " backend; validate it where that backend runs (scripts/gpu_calibrate.sh), "
                      "or fit a cpu profile");
  }
  const EngineServer server(scenario.config, o.engine);

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

  Observer quiet;
  report.engine = server.run(quiet);
  report.simulated = simulation.run(quiet);
  report.extrapolated_steps = report.simulated.extrapolated_steps;
  report.rows = compare_summaries(report.engine.summary, report.simulated.summary);
  return report;
}

}  // namespace servesim
