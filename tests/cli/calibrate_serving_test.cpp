// `servesim calibrate serving` as a user runs it: on the recorded published rows, fitting two
// parameters with one run held out — the report, the three files it writes, and that the
// written scenario simulates with the fitted values; and bad input (another model, an unknown
// parameter, no deployment): exit 2 with one line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

namespace servesim::testing {
namespace {

namespace fs = std::filesystem;

const std::string kRows =
    SERVESIM_SOURCE_DIR "/tests/calibration/data/published/qwen3-32b-h100-rows.csv";
const std::string kDeployment = " --model Qwen3-32B --gpu H100 --max-model-len 8192";

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

void expect_one_line_error(const CliResult& r, const std::string& needle) {
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

TEST(CalibrateServingCommand, FitsHoldsOutReportsAndWritesAScenarioThatSimulates) {
  const fs::path out =
      fs::temp_directory_path() / ("servesim_cal_serving_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const CliResult r = run_servesim("calibrate serving --measured " + kRows + kDeployment +
                                   " --fit memory_efficiency,step_overhead_s --holdout 0.34"
                                   " --max-iterations 4 --threads 2 --out " +
                                   out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("calibrate serving: fitted on 2 runs (2 measured values), 1 held out"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("mean |error| on the held-out runs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("qwen3-32b-h100-rows.csv:4"), std::string::npos) << r.out;

  const nlohmann::json report = read_json(out / "report.json");
  ASSERT_EQ(report["runs"].size(), 3u);
  EXPECT_TRUE(report["runs"][2]["held_out"].get<bool>());
  EXPECT_FALSE(report["runs"][0]["held_out"].get<bool>());
  const double fitted = report["parameters"]["memory_efficiency"]["fitted"].get<double>();
  const nlohmann::json profile = read_json(out / "profile.json");
  EXPECT_EQ(profile["format"], "servesim-serving-profile");
  EXPECT_EQ(profile["model"], "Qwen3-32B");
  EXPECT_EQ(profile["parameters"]["memory_efficiency"].get<double>(), fitted);
  EXPECT_EQ(profile["runs_held_out"].size(), 1u);
  const nlohmann::json scenario = read_json(out / "scenario.json");
  EXPECT_EQ(scenario["cost_model"]["memory_efficiency"].get<double>(), fitted);

  const CliResult sim = run_servesim("simulate " + (out / "scenario.json").string() +
                                     " --set workload.num_requests=4 --json");
  EXPECT_EQ(sim.exit_code, 0) << sim.err;
  fs::remove_all(out);
}

TEST(CalibrateServingCommand, BadInputIsOneLineAndExitTwo) {
  expect_one_line_error(
      run_servesim("calibrate serving --measured " + kRows + " --model Llama-3.1-8B --gpu H100"),
      "the run served model 'Qwen/Qwen3-32B', the scenario deploys 'Llama-3.1-8B'");
  expect_one_line_error(
      run_servesim("calibrate serving --measured " + kRows + kDeployment + " --fit speed"),
      "--fit: unknown parameter 'speed'");
  expect_one_line_error(run_servesim("calibrate serving --measured " + kRows),
                        "name the deployment: a scenario file, or --model and --gpu");
  expect_one_line_error(
      run_servesim("calibrate serving --measured " + kRows + kDeployment + " --holdout 1"),
      "--holdout: must be a fraction in [0, 1)");
}

}  // namespace
}  // namespace servesim::testing
