#include "calibration/serving/serving_fit.h"

#include <gtest/gtest.h>

#include <cmath>

#include "calibration/serving/serving_case_builder.h"
#include "calibration/serving/serving_report.h"
#include "models/config_error.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

SimulationConfig base_config(bool with_service) {
  nlohmann::json j = {{"model", "Llama-3.1-8B"},
                      {"gpu", "H100"},
                      {"engine", {{"max_model_len", 4096}}},
                      {"workload",
                       {{"arrival", {{"type", "closed"}, {"clients", 1}}},
                        {"prompt_tokens", 1},
                        {"output_tokens", 1},
                        {"num_requests", 1}}},
                      {"seed", 3}};
  if (!with_service) j["service"] = "none";
  return parse_scenario(j, ".", "test", Catalog()).config;
}

// What a deployment with `truth` would measure on a closed loop at `clients` with fixed lengths:
// servesim's own simulation at those parameters, each metric off by a fixed +/- noise.
MeasuredRun measured_run(const SimulationConfig& base, const ServingParameters& truth, int tp,
                         int clients, int prompt, double noise) {
  MeasuredRun run;
  run.source =
      "tp" + std::to_string(tp) + "-c" + std::to_string(clients) + "-p" + std::to_string(prompt);
  run.tensor_parallel_size = tp;
  run.load.max_concurrency = clients;
  run.prompt_tokens_per_request = prompt;
  run.output_tokens_per_request = 64;
  run.summary.completed = 48;
  MeasuredRun shape = run;
  shape.summary.tpot.mean_s = 1;  // any value: only the case's workload is used here
  const ServingFitCase c = make_serving_case(shape, base, Catalog());
  run.summary = simulate_serving_cases({c}, truth).front();
  run.summary.ttft.mean_s *= 1 + noise;
  run.summary.ttft.p99_s *= 1 - noise;
  run.summary.tpot.mean_s *= 1 - noise;
  run.summary.e2e.mean_s *= 1 + noise;
  run.summary.output_throughput *= 1 - noise;
  return run;
}

std::vector<ServingFitCase> cases_at(const SimulationConfig& base, const ServingParameters& truth) {
  std::vector<ServingFitCase> cases;
  double noise = 0.02;
  for (int tp : {1, 2})
    for (int clients : {2, 32})
      for (int prompt : {256, 2048}) {
        cases.push_back(make_serving_case(measured_run(base, truth, tp, clients, prompt, noise),
                                          base, Catalog()));
        noise = -noise;
      }
  return cases;
}

TEST(ServingFit, RecoversTheParametersItsOwnRunsWereSimulatedWith) {
  const SimulationConfig base = base_config(false);
  ServingParameters truth = serving_parameters_of(base);
  truth.compute_efficiency = 0.5;
  truth.memory_efficiency = 0.6;
  truth.step_overhead_s = 6.0e-3;
  truth.seq_overhead_s = 60e-6;
  const std::vector<ServingFitCase> cases = cases_at(base, truth);
  ServingFitOptions options;
  options.solver.max_iterations = 30;
  const ServingFit fit = fit_serving(cases, options);
  ASSERT_EQ(fit.parameters.size(), 4u);  // no frontend without a service path
  EXPECT_NEAR(fit.fitted.compute_efficiency, 0.5, 0.02);
  EXPECT_NEAR(fit.fitted.memory_efficiency, 0.6, 0.02);
  EXPECT_NEAR(fit.fitted.step_overhead_s, 6.0e-3, 0.15e-3);
  EXPECT_NEAR(fit.fitted.seq_overhead_s, 60e-6, 5e-6);
  EXPECT_LT(fit.cost_after, fit.cost_before / 20);

  // What it bought, on the same runs: TPOT from tens of percent off to about the noise.
  const ServingReport report =
      make_serving_report(cases, std::vector<bool>(cases.size(), false), fit, 0);
  const ServingMetricSpec& tpot = serving_metric_specs()[3];
  ASSERT_EQ(tpot.key, "tpot_mean");
  EXPECT_GT(mean_abs_error(report, tpot, false, false), 0.2);
  EXPECT_LT(mean_abs_error(report, tpot, false, true), 0.04);
}

// A TTFT the simulator cannot reach (here: every run's measured 3x too high, as lock-step
// cohorts make it) must not enter the decode side's fit: TPOT alone sets it. (A joint fit of the
// same parameters to every metric ends with memory_efficiency at its bound, trading TPOT for
// TTFT.)
TEST(ServingFit, ATtftMissDoesNotDragTheDecodeParameters) {
  const SimulationConfig base = base_config(false);
  ServingParameters truth = serving_parameters_of(base);
  truth.memory_efficiency = 0.6;
  truth.step_overhead_s = 1.5e-3;
  std::vector<ServingFitCase> cases = cases_at(base, truth);
  for (ServingFitCase& c : cases) {
    c.measured.ttft.mean_s *= 3;
    c.measured.ttft.p99_s *= 3;
  }
  ServingFitOptions options;
  options.parameters = {"memory_efficiency", "step_overhead_s"};
  const ServingFit fit = fit_serving(cases, options);
  EXPECT_NEAR(fit.fitted.memory_efficiency, 0.6, 0.02);
  EXPECT_NEAR(fit.fitted.step_overhead_s, 1.5e-3, 0.15e-3);
}

// One run from a deployment that differed in a way the data do not record (its TPOT 2.5x what
// the others imply) is outvoted, not split the difference with: the loss is robust.
TEST(ServingFit, OneInconsistentRunDoesNotDecideTheFit) {
  const SimulationConfig base = base_config(false);
  ServingParameters truth = serving_parameters_of(base);
  truth.memory_efficiency = 0.6;
  truth.step_overhead_s = 1.5e-3;
  std::vector<ServingFitCase> cases = cases_at(base, truth);
  cases[5].measured.tpot.mean_s *= 2.5;
  cases[5].measured.itl.mean_s *= 2.5;
  ServingFitOptions options;
  options.parameters = {"memory_efficiency", "step_overhead_s"};
  const ServingFit fit = fit_serving(cases, options);
  EXPECT_NEAR(fit.fitted.memory_efficiency, 0.6, 0.03);
  EXPECT_NEAR(fit.fitted.step_overhead_s, 1.5e-3, 0.25e-3);
}

TEST(ServingFit, IsDeterministicAndIndependentOfHowCasesAreRun) {
  const SimulationConfig base = base_config(false);
  ServingParameters truth = serving_parameters_of(base);
  truth.memory_efficiency = 0.7;
  const std::vector<ServingFitCase> cases = cases_at(base, truth);
  ServingFitOptions options;
  options.parameters = {"memory_efficiency", "step_overhead_s"};
  const ServingFit a = fit_serving(cases, options);
  options.for_each = [](size_t n, const std::function<void(size_t)>& body) {
    for (size_t i = n; i-- > 0;) body(i);  // backwards: order must not matter
  };
  const ServingFit b = fit_serving(cases, options);
  EXPECT_EQ(a.fitted.memory_efficiency, b.fitted.memory_efficiency);
  EXPECT_EQ(a.fitted.step_overhead_s, b.fitted.step_overhead_s);
  EXPECT_EQ(a.simulations, b.simulations);
}

TEST(ServingFit, FitsTheFrontendOnlyWhereThereIsOne) {
  EXPECT_THROW(serving_search_space({"frontend_scale"}, {}, base_config(false)), ConfigError);
  const SimulationConfig with = base_config(true);
  const auto space = serving_search_space({"frontend_scale"}, serving_parameters_of(with), with);
  ASSERT_EQ(space.size(), 1u);
  EXPECT_EQ(space[0].initial, 1.0);
  EXPECT_THROW(serving_search_space({"memory_efficiency", "memory_efficiency"}, {}, with),
               ConfigError);
  try {
    serving_search_space({"memory_eficiency"}, {}, with);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("known: compute_efficiency"), std::string::npos);
  }
}

TEST(ServingFit, ScalesTheFrontendsCostsAndNothingElse) {
  const SimulationConfig base = base_config(true);
  ServingParameters p = serving_parameters_of(base);
  p.frontend_scale = 2;
  const SimulationConfig scaled = with_serving_parameters(base, p);
  EXPECT_DOUBLE_EQ(scaled.service.frontend.station.request_s.mean(),
                   2 * base.service.frontend.station.request_s.mean());
  EXPECT_DOUBLE_EQ(scaled.service.frontend.per_output_token_s,
                   2 * base.service.frontend.per_output_token_s);
  EXPECT_DOUBLE_EQ(scaled.service.frontend.step_s.mean(), 2 * base.service.frontend.step_s.mean());
  EXPECT_EQ(*scaled.roofline.memory_efficiency, p.memory_efficiency);
  EXPECT_EQ(serving_parameters_of(scaled).frontend_scale, 1.0);  // the config's own costs now
}

// Runs measured through a network with a 50 ms round trip: named, the fit finds it, from TTFT
// alone (TPOT does not see a fixed latency), with every other parameter fitted too.
TEST(ServingFit, RecoversTheRoundTripItsRunsWereMeasuredThrough) {
  const SimulationConfig base = base_config(true);
  ServingParameters truth = serving_parameters_of(base);
  truth.rtt_s = 0.05;
  const std::vector<ServingFitCase> cases = cases_at(base, truth);
  ServingFitOptions options;
  EXPECT_EQ(fit_serving(cases, options).parameters.size(), 5u);  // the round trip when named
  options.parameters = {"compute_efficiency", "memory_efficiency", "step_overhead_s",
                        "seq_overhead_s",     "frontend_scale",    "rtt_s"};
  options.solver.max_iterations = 30;
  const ServingFit fit = fit_serving(cases, options);
  EXPECT_NEAR(fit.fitted.rtt_s, 0.05, 0.005);
  EXPECT_NEAR(fit.fitted.memory_efficiency, truth.memory_efficiency, 0.02);
  EXPECT_LT(fit.cost_after, fit.cost_before / 20);
}

// The round trip is fitted only where there is one to set, as one number: without a service path
// or over a distribution (whose spread a fitted number would drop) it is refused with the fix,
// and the default fit leaves it out.
TEST(ServingFit, FitsTheRoundTripOnlyWhereItIsANumber) {
  const SimulationConfig none = base_config(false);
  EXPECT_FALSE(serving_parameter_applies("rtt_s", none));
  EXPECT_THROW(serving_search_space({"rtt_s"}, {}, none), ConfigError);
  SimulationConfig spread = base_config(true);
  EXPECT_TRUE(serving_parameter_applies("rtt_s", spread));
  spread.service.rtt_s = Distribution::from_json(
      nlohmann::json{{"type", "uniform"}, {"min", 0.01}, {"max", 0.03}}, "rtt_s", ".", 0, false);
  EXPECT_FALSE(serving_parameter_applies("rtt_s", spread));
  try {
    serving_search_space({"rtt_s"}, serving_parameters_of(spread), spread);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("make service.network.rtt_s a number"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(serving_parameter_applies("memory_efficiency", spread));
  EXPECT_FALSE(serving_parameter_by_default("rtt_s"));
  EXPECT_TRUE(serving_parameter_by_default("frontend_scale"));
  EXPECT_THROW(serving_parameter_by_default("rtt"), ConfigError);
}

TEST(ServingFit, SetsTheRoundTripAndNothingElse) {
  const SimulationConfig base = base_config(true);
  ServingParameters p = serving_parameters_of(base);
  EXPECT_EQ(p.rtt_s, 0.0);
  p.rtt_s = 0.02;
  const SimulationConfig set = with_serving_parameters(base, p);
  EXPECT_EQ(set.service.rtt_s.kind(), Distribution::Kind::kFixed);
  EXPECT_DOUBLE_EQ(set.service.rtt_s.mean(), 0.02);
  EXPECT_DOUBLE_EQ(set.service.frontend.station.request_s.mean(),
                   base.service.frontend.station.request_s.mean());
  EXPECT_EQ(serving_parameters_of(set).rtt_s, 0.02);
  EXPECT_EQ(serving_parameter_stage("rtt_s"), ServingStage::kPrefill);
}

TEST(ServingFit, RefusesTooFewMeasuredValues) {
  const SimulationConfig base = base_config(false);
  MeasuredRun run;
  run.source = "one.json";
  run.load.max_concurrency = 2;
  run.prompt_tokens_per_request = 128;
  run.output_tokens_per_request = 16;
  run.summary.completed = 8;
  run.summary.tpot.mean_s = 0.01;  // one value
  const ServingFitCase c = make_serving_case(run, base, Catalog());
  ServingFitOptions options;
  options.parameters = {"memory_efficiency", "step_overhead_s"};
  try {
    fit_serving({c}, options);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("measured 1 values for the decode (TPOT, ITL) stage's 2"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(fit_serving({}, options), ConfigError);
}

TEST(ServingFit, HoldsOutEvenlySpacedRuns) {
  EXPECT_EQ(held_out_runs(4, 0.25), (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(held_out_runs(8, 0.25),
            (std::vector<bool>{false, false, false, true, false, false, false, true}));
  EXPECT_EQ(held_out_runs(3, 0), (std::vector<bool>{false, false, false}));
  EXPECT_EQ(held_out_runs(1, 0.5), (std::vector<bool>{false}));
  EXPECT_THROW(held_out_runs(3, 1.0), ConfigError);
  EXPECT_THROW(held_out_runs(3, -0.1), ConfigError);
}

}  // namespace
}  // namespace servesim
