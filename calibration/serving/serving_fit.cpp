#include "calibration/serving/serving_fit.h"

#include <algorithm>
#include <cmath>
#include <exception>

#include "models/config_error.h"
#include "sim/core/observer.h"

namespace servesim {
namespace {

void run_all(size_t count, const ForEachCase& for_each, const std::function<void(size_t)>& body) {
  if (for_each) {
    for_each(count, body);
  } else {
    for (size_t i = 0; i < count; ++i) body(i);
  }
}

std::vector<std::string> parameters_to_fit(const ServingFitOptions& options,
                                           const SimulationConfig& base) {
  if (!options.parameters.empty()) return options.parameters;
  std::vector<std::string> out;
  for (std::string_view name : serving_parameter_names())
    if (serving_parameter_by_default(name) && serving_parameter_applies(name, base))
      out.emplace_back(name);
  return out;
}

bool usable(double measured) {
  return std::isfinite(measured) && measured > 0;
}

// The residual whose square is the Cauchy loss of r: r itself near 0, growing only as
// sqrt(log |r|) far out.
double robust(double r) {
  const double c = kServingRobustScale;
  return std::copysign(c * std::sqrt(std::log1p((r / c) * (r / c))), r);
}

// log(simulated / measured) for every fitted metric of `stage` the case measured, in spec order,
// under the robust loss.
void append_residuals(const MetricsSummary& measured, const MetricsSummary& simulated,
                      ServingStage stage, std::vector<double>& out) {
  for (const ServingMetricSpec& m : serving_metric_specs()) {
    if (!m.fitted || m.stage != stage || !usable(m.get(measured))) continue;
    const double s = m.get(simulated);
    out.push_back(robust(usable(s) ? std::log(s / m.get(measured)) : kServingMissPenalty));
  }
}

double cost_of(const std::vector<ServingFitCase>& cases, const std::vector<MetricsSummary>& sim) {
  std::vector<double> r;
  for (size_t i = 0; i < cases.size(); ++i)
    for (ServingStage stage : {ServingStage::kDecode, ServingStage::kPrefill})
      append_residuals(cases[i].measured, sim[i], stage, r);
  double cost = 0;
  for (double v : r) cost += 0.5 * v * v;
  return cost;
}

const char* stage_name(ServingStage stage) {
  return stage == ServingStage::kDecode ? "decode (TPOT, ITL)" : "prefill (TTFT)";
}

// The names of `stage`, in fit order, with how many measured values constrain them.
std::vector<std::string> stage_parameters(const std::vector<std::string>& names, ServingStage stage,
                                          const std::vector<ServingFitCase>& cases,
                                          size_t& values) {
  std::vector<std::string> out;
  for (const std::string& n : names)
    if (serving_parameter_stage(n) == stage) out.push_back(n);
  std::vector<double> probe;
  for (const ServingFitCase& c : cases) append_residuals(c.measured, c.measured, stage, probe);
  values = probe.size();
  if (!out.empty() && values < out.size())
    throw ConfigError("calibrate serving: the runs measured " + std::to_string(values) +
                      " values for the " + stage_name(stage) + " stage's " +
                      std::to_string(out.size()) +
                      " parameters; supply more runs or name fewer with --fit");
  return out;
}

// One stage's least-squares fit from `current`; returns the new parameters.
ServingParameters fit_stage(const std::vector<ServingFitCase>& cases,
                            const std::vector<std::string>& names, ServingStage stage,
                            const ServingParameters& current, const ServingParameters& start,
                            const ServingFitOptions& options, LeastSquaresResult& result) {
  std::vector<BoundedParameter> space = serving_search_space(names, current, cases.front().config);
  const std::vector<BoundedParameter> prior =
      serving_search_space(names, start, cases.front().config);
  const ResidualFunction residuals = [&](const std::vector<double>& x) {
    const ServingParameters p = serving_parameters_from(names, x, current);
    const std::vector<MetricsSummary> simulated =
        simulate_serving_cases(cases, p, options.for_each);
    std::vector<double> r;
    for (size_t i = 0; i < cases.size(); ++i)
      append_residuals(cases[i].measured, simulated[i], stage, r);
    for (size_t k = 0; k < space.size(); ++k)
      r.push_back(kServingPriorWeight * std::log(x[k] / prior[k].initial));
    return r;
  };
  result = fit_bounded_least_squares(space, residuals, options.solver);
  return serving_parameters_from(names, result.x, current);
}

}  // namespace

const std::vector<ServingMetricSpec>& serving_metric_specs() {
  static const std::vector<ServingMetricSpec> specs = {
      {"ttft_mean", "ms", 1e3, [](const MetricsSummary& s) { return s.ttft.mean_s; }, true,
       ServingStage::kPrefill},
      {"ttft_p50", "ms", 1e3, [](const MetricsSummary& s) { return s.ttft.p50_s; }, false,
       ServingStage::kDecode},
      {"ttft_p99", "ms", 1e3, [](const MetricsSummary& s) { return s.ttft.p99_s; }, true,
       ServingStage::kPrefill},
      {"tpot_mean", "ms", 1e3, [](const MetricsSummary& s) { return s.tpot.mean_s; }, true,
       ServingStage::kDecode},
      {"tpot_p50", "ms", 1e3, [](const MetricsSummary& s) { return s.tpot.p50_s; }, false,
       ServingStage::kDecode},
      {"tpot_p99", "ms", 1e3, [](const MetricsSummary& s) { return s.tpot.p99_s; }, false,
       ServingStage::kDecode},
      {"itl_mean", "ms", 1e3, [](const MetricsSummary& s) { return s.itl.mean_s; }, true,
       ServingStage::kDecode},
      {"itl_p50", "ms", 1e3, [](const MetricsSummary& s) { return s.itl.p50_s; }, false,
       ServingStage::kDecode},
      {"itl_p99", "ms", 1e3, [](const MetricsSummary& s) { return s.itl.p99_s; }, false,
       ServingStage::kDecode},
      {"e2e_mean", "ms", 1e3, [](const MetricsSummary& s) { return s.e2e.mean_s; }, false,
       ServingStage::kDecode},
      {"e2e_p50", "ms", 1e3, [](const MetricsSummary& s) { return s.e2e.p50_s; }, false,
       ServingStage::kDecode},
      {"e2e_p99", "ms", 1e3, [](const MetricsSummary& s) { return s.e2e.p99_s; }, false,
       ServingStage::kDecode},
      {"output_throughput", "tok/s", 1, [](const MetricsSummary& s) { return s.output_throughput; },
       false, ServingStage::kDecode},
      {"request_throughput", "req/s", 1,
       [](const MetricsSummary& s) { return s.request_throughput; }, false, ServingStage::kDecode},
  };
  return specs;
}

std::vector<MetricsSummary> simulate_serving_cases(const std::vector<ServingFitCase>& cases,
                                                   const ServingParameters& p,
                                                   const ForEachCase& for_each) {
  std::vector<MetricsSummary> out(cases.size());
  std::vector<std::string> errors(cases.size());
  run_all(cases.size(), for_each, [&](size_t i) {
    try {
      Simulation simulation(with_serving_parameters(cases[i].config, p));
      NullObserver observer;
      out[i] = simulation.run(observer).summary;
    } catch (const std::exception& e) {
      errors[i] = e.what();
    }
  });
  for (size_t i = 0; i < cases.size(); ++i)
    if (!errors[i].empty()) throw ConfigError(cases[i].name + ": simulation failed: " + errors[i]);
  return out;
}

ServingFit fit_serving(const std::vector<ServingFitCase>& cases, const ServingFitOptions& options) {
  if (cases.empty())
    throw ConfigError("calibrate serving: no measured run to fit; pass --measured");
  ServingFit fit;
  fit.initial = serving_parameters_of(cases.front().config);
  fit.parameters = parameters_to_fit(options, cases.front().config);
  serving_search_space(fit.parameters, fit.initial, cases.front().config);  // checks the names
  size_t decode_values = 0, prefill_values = 0;
  const std::vector<std::string> decode =
      stage_parameters(fit.parameters, ServingStage::kDecode, cases, decode_values);
  const std::vector<std::string> prefill =
      stage_parameters(fit.parameters, ServingStage::kPrefill, cases, prefill_values);
  fit.residuals = (decode.empty() ? 0 : decode_values) + (prefill.empty() ? 0 : prefill_values);

  fit.cost_before = cost_of(cases, simulate_serving_cases(cases, fit.initial, options.for_each));
  ServingParameters current = fit.initial;
  std::vector<bool> at_bound(fit.parameters.size(), false);
  for (int round = 0; round < 2; ++round) {
    for (ServingStage stage : {ServingStage::kDecode, ServingStage::kPrefill}) {
      const std::vector<std::string>& names = stage == ServingStage::kDecode ? decode : prefill;
      if (names.empty()) continue;
      LeastSquaresResult r;
      if (round == 0 && names.size() > 1 &&
          std::find(names.begin(), names.end(), "rtt_s") != names.end()) {
        // The round trip alone first: it is the one term that shifts every run's TTFT by the
        // same time, and from its default of 0 the joint fit would let the frontend's costs,
        // which grow with the prompt, take up a latency that does not.
        current = fit_stage(cases, {"rtt_s"}, stage, current, fit.initial, options, r);
        fit.iterations += r.iterations;
        fit.simulations += r.evaluations;
      }
      current = fit_stage(cases, names, stage, current, fit.initial, options, r);
      fit.iterations += r.iterations;
      fit.simulations += r.evaluations;
      for (size_t k = 0; k < names.size(); ++k)
        for (size_t j = 0; j < fit.parameters.size(); ++j)
          if (fit.parameters[j] == names[k]) at_bound[j] = r.at_bound[k];
    }
  }
  fit.fitted = current;
  fit.at_bound = at_bound;
  fit.cost_after = cost_of(cases, simulate_serving_cases(cases, fit.fitted, options.for_each));
  fit.simulations += 2;
  return fit;
}

}  // namespace servesim
