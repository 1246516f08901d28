// calibrate validate's arithmetic: medians and spreads over several engine runs, the step check
// over the engine's own steps, and the options it refuses.
#include "calibration/profile/validator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "calibration/profile/profile_fitter.h"
#include "calibration/profile/speed_probe.h"
#include "calibration_test_util.h"
#include "models/config_error.h"

namespace servesim {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

MetricsSummary summary(double output_throughput, double ttft_p50_s) {
  MetricsSummary s;
  s.output_throughput = output_throughput;
  s.ttft.p50_s = ttft_p50_s;
  return s;
}

const MetricComparison& find(const std::vector<MetricComparison>& rows, const std::string& m) {
  for (const MetricComparison& r : rows) {
    if (r.metric == m) return r;
  }
  throw std::runtime_error("no row " + m);
}

TEST(Validator, EngineFiguresAreTheMediansOfTheRunsWithTheirSpread) {
  const std::vector<MetricComparison> rows = compare_summaries(
      {summary(10, 0.20), summary(12, 0.30), summary(11, 0.25)}, summary(11.55, 0.20));
  const MetricComparison& tput = find(rows, "output_throughput");
  EXPECT_EQ(tput.engine_runs, (std::vector<double>{10, 12, 11}));
  EXPECT_DOUBLE_EQ(tput.engine, 11);
  EXPECT_DOUBLE_EQ(tput.engine_spread, 2.0 / 11);
  EXPECT_NEAR(tput.error, 0.05, 1e-12);
  const MetricComparison& ttft = find(rows, "ttft_p50");
  EXPECT_EQ(ttft.unit, "ms");
  EXPECT_DOUBLE_EQ(ttft.engine, 250);
  EXPECT_NEAR(ttft.error, -0.2, 1e-12);
}

TEST(Validator, OneRunHasNoSpreadAndARunThatMeasuredNothingIsLeftOut) {
  const MetricComparison one =
      find(compare_summaries({summary(10, 0.2)}, summary(9, 0.2)), "output_throughput");
  EXPECT_DOUBLE_EQ(one.engine, 10);
  EXPECT_EQ(one.engine_spread, 0.0);
  EXPECT_NEAR(one.error, -0.1, 1e-12);

  const MetricComparison some = find(
      compare_summaries({summary(10, 0.2), MetricsSummary{}, summary(14, 0.2)}, summary(12, 0.2)),
      "output_throughput");
  EXPECT_DOUBLE_EQ(some.engine, 12);
  EXPECT_EQ(some.engine_runs.size(), 3u);
  EXPECT_TRUE(std::isnan(some.engine_runs[1]));

  const MetricComparison none =
      find(compare_summaries({MetricsSummary{}}, summary(12, 0.2)), "output_throughput");
  EXPECT_TRUE(std::isnan(none.engine));
  EXPECT_TRUE(std::isnan(none.error));
}

TEST(SpeedProbe, FactorIsTheMedianRatioOfNowToThen) {
  std::vector<ReferenceStep> steps(3);
  steps[0].step_s = 0.1;
  steps[1].step_s = 0.2;
  steps[2].step_s = 0.4;
  EXPECT_DOUBLE_EQ(speed_factor(std::vector<double>{0.11, 0.2, 0.8}, steps), 1.1);
  EXPECT_DOUBLE_EQ(speed_factor(std::vector<double>{0.1, 0.2, 0.4}, steps), 1.0);
}

TEST(SpeedProbe, ReMeasuresTheProfilesReferenceStepsOnItsModel) {
  const CalibrationProfile p = fit_profile(testing::synthetic_run(0.0), FitOptions{}).profile;
  ASSERT_GE(p.reference_steps.size(), 2u);
  SpeedProbe probe(p);
  EXPECT_EQ(probe.steps().size(), p.reference_steps.size());
  const std::vector<double> now = probe.measure_steps(2);
  ASSERT_EQ(now.size(), p.reference_steps.size());
  for (double s : now) EXPECT_GT(s, 0.0);
  // Against a profile that recorded every step twice as fast, the same measurements read as
  // twice the factor.
  CalibrationProfile faster = p;
  for (ReferenceStep& s : faster.reference_steps) s.step_s /= 2;
  EXPECT_DOUBLE_EQ(speed_factor(now, faster.reference_steps),
                   2 * speed_factor(now, p.reference_steps));
  const double factor = probe.measure(1);
  EXPECT_GT(factor, 0.0);
  EXPECT_TRUE(std::isfinite(factor));
}

TEST(SpeedProbe, AProfileWithoutReferenceStepsSaysWhatToRerun) {
  CalibrationProfile p = fit_profile(testing::synthetic_run(0.0), FitOptions{}).profile;
  p.reference_steps.clear();
  EXPECT_THAT([&] { SpeedProbe probe(p); },
              ThrowsMessage<ConfigError>(HasSubstr("re-run `servesim calibrate fit`")));
}

class ValidateTiny : public ::testing::Test {
 protected:
  static std::string profile_path(const std::string& backend = "cpu") {
    CalibrationProfile p = fit_profile(testing::synthetic_run(0.0), FitOptions{}).profile;
    p.backend = backend;
    const std::string path = testing::fresh_dir("validator_" + backend) + "/profile.json";
    save_profile(p, path);
    return path;
  }

  static Scenario scenario() {
    return load_scenario(
        std::string(SERVESIM_SOURCE_DIR) + "/tests/calibration/data/calibrate-tiny.json",
        {"workload.num_requests=4", "workload.arrival.rate_qps=1000"}, Catalog());
  }
};

TEST_F(ValidateTiny, ServesEveryRunAndPricesEveryStepTheEngineTook) {
  ValidationOptions o;
  o.profile_path = profile_path();
  o.runs = 2;
  const ValidationReport r = validate_profile(scenario(), o);
  ASSERT_EQ(r.engine_runs.size(), 2u);
  int64_t steps = 0;
  for (const EngineServeResult& run : r.engine_runs) {
    EXPECT_EQ(run.summary.completed, 4u);
    ASSERT_EQ(run.steps.size(), static_cast<size_t>(run.engine.steps));
    double busy_s = 0;
    for (const ServedStep& s : run.steps) {
      EXPECT_GT(s.shape.num_tokens, 0);
      EXPECT_GT(s.seconds, 0.0);
      busy_s += s.seconds;
    }
    EXPECT_NEAR(busy_s, run.engine.busy_s, 1e-9 * run.engine.busy_s);
    steps += run.engine.steps;
  }
  EXPECT_EQ(r.step_check.steps, steps);
  // Probed before the first run and after each, around the profile's own speed.
  ASSERT_TRUE(r.speed_probed);
  ASSERT_EQ(r.probes.size(), 3u);
  for (double v : r.probes) EXPECT_GT(v, 0.0);
  for (const MetricComparison& m : r.rows) EXPECT_EQ(m.engine_runs.size(), 2u) << m.metric;
  const nlohmann::json j = r.to_json();
  EXPECT_EQ(j["engine"]["runs"].size(), 2u);
  EXPECT_EQ(j["step_check"]["steps"], steps);
  EXPECT_EQ(j["comparison"][0]["engine_runs"].size(), 2u);
  EXPECT_EQ(j["speed_probe"]["probes"].size(), 3u);
  EXPECT_EQ(j["speed_probe"]["probes"][2], r.probes[2]);
}

TEST_F(ValidateTiny, TheProbeCanBeLeftOut) {
  ValidationOptions o;
  o.profile_path = profile_path();
  o.runs = 1;
  o.speed_probe = false;
  const ValidationReport r = validate_profile(scenario(), o);
  EXPECT_FALSE(r.speed_probed);
  EXPECT_TRUE(r.probes.empty());
  EXPECT_FALSE(r.to_json()["speed_probe"]["enabled"].get<bool>());
}

TEST_F(ValidateTiny, ACudaProfileIsServedOnTheCudaBackend) {
  ValidationOptions o;
  o.profile_path = profile_path("cuda");
  o.runs = 1;
  try {
    validate_profile(scenario(), o);
    GTEST_SKIP() << "a CUDA device served the workload";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--backend cuda"));
  }
}

TEST_F(ValidateTiny, RunsMustBePositive) {
  ValidationOptions o;
  o.profile_path = profile_path();
  o.runs = 0;
  EXPECT_THAT([&] { validate_profile(scenario(), o); },
              ThrowsMessage<ConfigError>(HasSubstr("--runs must be >= 1")));
}

}  // namespace
}  // namespace servesim
