// `servesim calibrate` end to end on the CPU engine, as a user runs it: profile, fit and
// validate a ~4M-parameter model on a saturating workload, then the bad inputs. The bounds
// are loose because CI machines are shared; docs/validation.md has the figures of a quiet run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "models/calibration_profile.h"
#include "tests/cli/cli_runner.h"

namespace servesim {
namespace {

using ::testing::HasSubstr;
using testing::run_servesim;

const std::string kData = std::string(SERVESIM_SOURCE_DIR) + "/tests/calibration/data/";
const std::string kScenario = kData + "calibrate-tiny.json";
// Every request arrives at once: throughput then measures the engine's speed, not the load.
const std::string kSaturate = " --set workload.arrival.rate_qps=1000";
const std::string kGrid = " --max-tokens 256 --max-seqs 16 --max-context 512 --repeats 5";

std::string fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("servesim_pipeline_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

double error_of(const nlohmann::json& report, const std::string& metric) {
  for (const auto& row : report["comparison"]) {
    if (row["metric"] == metric) return row["error"].get<double>();
  }
  ADD_FAILURE() << "no " << metric << " in the report";
  return 1e9;
}

// How much slower the machine ran the profile's reference steps while the engine served than
// when it was profiled (the speed probe's median time now / then; 1 without probes).
double machine_drift(const nlohmann::json& report) {
  std::vector<double> probes;
  for (const auto& p : report["speed_probe"]["probes"]) probes.push_back(p.get<double>());
  if (probes.empty()) return 1;
  std::sort(probes.begin(), probes.end());
  const size_t n = probes.size();
  return n % 2 ? probes[n / 2] : (probes[n / 2 - 1] + probes[n / 2]) / 2;
}

// The simulated metric's error once the machine's own slow-down is taken out: a simulator priced
// at profiling speed over-predicts an engine run on a machine `drift` times slower by that much.
double error_at_profiling_speed(const nlohmann::json& report, const std::string& metric) {
  return (1 + error_of(report, metric)) / machine_drift(report) - 1;
}

// One test, in the order a user goes: profiling is the slow part, so it runs once.
TEST(CalibratePipeline, ProfileFitValidateTransferResume) {
  const std::string dir = fresh_dir("all");
  const auto all = run_servesim("calibrate all " + kScenario + " --out " + dir + kGrid + kSaturate);
  ASSERT_EQ(all.exit_code, 0) << all.err << all.out;
  EXPECT_THAT(all.out, HasSubstr("calibrate profile: Llama-tiny-calib on cpu"));
  EXPECT_THAT(all.out, HasSubstr("held-out step time: MAPE"));
  EXPECT_THAT(all.out, HasSubstr("output_throughput (tok/s)"));

  const std::string profile = dir + "/profile.json";
  const CalibrationProfile p = load_profile(profile);
  EXPECT_EQ(p.model, "Llama-tiny-calib");
  EXPECT_EQ(p.backend, "cpu");
  EXPECT_LT(p.fit.step.mape, 0.3) << all.out;  // 16% on a quiet machine (docs/validation.md)
  EXPECT_GT(p.fit.step.r2, 0.8) << all.out;
  EXPECT_GT(p.rates.gemm_flops_per_s, 1e8);

  const nlohmann::json report = read_json(dir + "/validation.json");
  EXPECT_EQ(report["served_model"], "Llama-tiny-calib");
  EXPECT_FALSE(report["transferred"].get<bool>());
  ASSERT_FALSE(report["engine"]["runs"].empty());
  for (const auto& run : report["engine"]["runs"]) EXPECT_EQ(run["summary"]["completed"], 40);
  EXPECT_GT(report["step_check"]["steps"].get<int>(), 0);
  EXPECT_EQ(report["simulated"]["summary"]["completed"], 40);
  // Saturated, throughput is the cost model's prediction of the engine's speed — at the speed
  // the machine had when profiled: on a shared machine another process can slow the engine's
  // runs by a third (probes of 1.36 seen), which is drift, not model error.
  EXPECT_LT(std::abs(error_at_profiling_speed(report, "output_throughput")), 0.25) << all.out;
  EXPECT_LT(std::abs(error_of(report, "tpot_p50")), 0.5) << all.out;

  // Transfer: the profile predicts a wider, shallower model it never measured.
  const std::string wide = " --set model=" + kData + "llama-tiny-wide-calib.json";
  const auto refused =
      run_servesim("calibrate validate " + kScenario + " --profile " + profile + wide);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("cost_model.transfer=true"));
  const std::string transfer_report = dir + "/transfer.json";
  const auto transfer = run_servesim("calibrate validate " + kScenario + " --profile " + profile +
                                     wide + kSaturate + " --transfer --report " + transfer_report);
  ASSERT_EQ(transfer.exit_code, 0) << transfer.err;
  EXPECT_THAT(transfer.out, HasSubstr("(Llama-tiny-calib, transferred)"));
  const nlohmann::json t = read_json(transfer_report);
  EXPECT_TRUE(t["transferred"].get<bool>());
  EXPECT_EQ(t["served_model"], "Llama-tiny-wide-calib");
  EXPECT_LT(std::abs(error_at_profiling_speed(t, "output_throughput")), 0.5) << transfer.out;

  // A finished profile resumed measures nothing.
  const auto resumed = run_servesim("calibrate profile --model " + kData +
                                    "llama-tiny-calib.json --out " + dir + "/run" + kGrid);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_THAT(resumed.out, HasSubstr(": 0 steps measured"));

  // --max-error fails the run: no simulator is within a millionth of a wall-clock measurement.
  const auto strict = run_servesim("calibrate validate " + kScenario + " --profile " + profile +
                                   " --set workload.num_requests=8 --max-error 0.000001");
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_THAT(strict.err, HasSubstr("limit 0%"));
}

TEST(CalibrateCommand, BadInputIsAOneLineError) {
  struct Case {
    std::string args, message;
  };
  const std::string missing = fresh_dir("missing");
  const Case cases[] = {
      {"calibrate fit " + missing + " --out " + missing + ".json", "no such profile directory"},
      {"calibrate validate " + kScenario + " --profile " + missing + ".json", "cannot open"},
      {"calibrate profile --model Mixtral-8x7B --out " + missing, "Mixtral"},
      {"calibrate profile --model SmolLM2-135M --backend tpu --out " + missing,
       "--backend must be cpu or cuda"},
      {"calibrate profile --model SmolLM2-135M --max-tokens 4 --out " + missing,
       "--max-tokens must be >= 16"},
  };
  for (const Case& c : cases) {
    const auto r = run_servesim(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << c.args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // Flag values CLI11 checks: refused before anything runs, naming the flag and its range.
  const auto runs = run_servesim("calibrate validate " + kScenario + " --profile x.json --runs 0");
  EXPECT_NE(runs.exit_code, 0);
  EXPECT_THAT(runs.err, HasSubstr("--runs: Value 0 not in range 1 to 100"));
}

}  // namespace
}  // namespace servesim
