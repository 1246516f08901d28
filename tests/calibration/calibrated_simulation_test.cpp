// The simulator priced by a calibrated profile, as a scenario's cost_model block selects it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "calibration/profile/profile_fitter.h"
#include "calibration_test_util.h"
#include "models/config_error.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// A profile fitted to synthetic data, coefficients scaled by `scale`, saved to a file.
std::string saved_profile(const std::string& name, double scale) {
  CalibrationProfile p = fit_profile(testing::synthetic_run(0.0), FitOptions{}).profile;
  for (auto& c : p.coefficients) {
    for (double& v : c) v *= scale;
  }
  const std::string path = testing::fresh_dir("calsim_" + name) + "/profile.json";
  save_profile(p, path);
  return path;
}

nlohmann::json scenario_json(const std::string& profile) {
  return {
      {"name", "calibrated"},
      {"model", testing::kTinyModelPath},
      {"gpu", "L4"},
      {"engine", {{"max_model_len", 1024}, {"max_num_seqs", 16}, {"max_num_batched_tokens", 512}}},
      {"cost_model", {{"type", "calibrated"}, {"profile", profile}}},
      {"workload",
       {{"arrival", {{"type", "poisson"}, {"rate_qps", 50}}},
        {"prompt_tokens", {{"type", "uniform"}, {"min", 32}, {"max", 256}}},
        {"output_tokens", {{"type", "uniform"}, {"min", 16}, {"max", 64}}},
        {"num_requests", 100}}},
      {"seed", 5}};
}

SimulationResult simulate(const nlohmann::json& j) {
  const Scenario s = parse_scenario(j, "", "test", Catalog());
  Simulation sim(s.config);
  Observer quiet;
  return sim.run(quiet);
}

TEST(CalibratedSimulation, StepTimesComeFromTheProfile) {
  const SimulationResult base = simulate(scenario_json(saved_profile("x1", 1.0)));
  const SimulationResult slow = simulate(scenario_json(saved_profile("x3", 3.0)));
  EXPECT_EQ(base.summary.completed, 100u);
  EXPECT_EQ(slow.summary.completed, 100u);
  // Three times the seconds per FLOP, byte and step: three times the busy time.
  EXPECT_NEAR(slow.replicas[0].busy_s / base.replicas[0].busy_s, 3.0, 0.3);
  EXPECT_GT(slow.summary.tpot.p50_s, 2.0 * base.summary.tpot.p50_s);
  EXPECT_GT(base.replicas[0].op_totals[Op::kMlp], 0.0);
  EXPECT_EQ(base.replicas[0].op_totals[Op::kComm], 0.0);
  EXPECT_EQ(base.extrapolated_steps, 0);
  EXPECT_EQ(simulate(scenario_json(saved_profile("x1b", 1.0))).fingerprint, base.fingerprint);
}

TEST(CalibratedSimulation, BeyondTheRangeIsRefusedOrCounted) {
  nlohmann::json j = scenario_json(saved_profile("range", 1.0));
  // The synthetic profile covers up to 1024 context tokens; these prompts reach 1900.
  j["engine"]["max_model_len"] = 2048;
  j["workload"]["prompt_tokens"] = {{"type", "uniform"}, {"min", 1700}, {"max", 1900}};
  j["engine"]["max_num_batched_tokens"] = 2048;
  EXPECT_THAT([&] { simulate(j); }, ThrowsMessage<ConfigError>(HasSubstr("beyond the calibrated")));
  j["cost_model"]["extrapolate"] = true;
  const SimulationResult r = simulate(j);
  EXPECT_EQ(r.summary.completed, 100u);
  EXPECT_GT(r.extrapolated_steps, 0);
}

TEST(CalibratedSimulation, BadCostModelBlocksAreOneLineErrors) {
  nlohmann::json j = scenario_json("/nonexistent/profile.json");
  EXPECT_THAT([&] { simulate(j); },
              ThrowsMessage<ConfigError>(HasSubstr("test: cost_model.profile: /nonexistent")));
  j = scenario_json(saved_profile("bad", 1.0));
  j["cost_model"]["compute_efficiency"] = 0.5;  // a roofline key
  EXPECT_THAT([&] { simulate(j); }, ThrowsMessage<ConfigError>(HasSubstr("compute_efficiency")));
  j = scenario_json(saved_profile("bad2", 1.0));
  j["cost_model"]["type"] = "magic";
  EXPECT_THAT([&] { simulate(j); }, ThrowsMessage<ConfigError>(HasSubstr("\"calibrated\"")));
  j = scenario_json(saved_profile("bad3", 1.0));
  j["model"] = "Llama-100M-bench";
  EXPECT_THAT([&] { simulate(j); },
              ThrowsMessage<ConfigError>(HasSubstr("cost_model.transfer=true")));
  j["cost_model"]["transfer"] = true;
  EXPECT_EQ(simulate(j).summary.completed, 100u);
}

}  // namespace
}  // namespace servesim
