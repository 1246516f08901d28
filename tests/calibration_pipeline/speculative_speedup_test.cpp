// Issue #20's check of speculative decoding against the engine: the CPU engine runs n-gram
// speculation for real, `engine run` measures how often prompt lookup matched and how many
// drafts were accepted per position, and `simulate` with the profile `calibrate` fitted on this
// machine and those measured keys must predict the engine's speed-up (throughput with
// speculation over without). The speed-up is a ratio of two runs on the same machine, so
// noise shared by both cancels; the bound is the calibration's tolerance on a shared 2-core
// machine (docs/speculative-decoding.md has the figures of a run).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli/cli_runner.h"

namespace servesim {
namespace {

using testing::run_servesim;

const std::string kData = std::string(SERVESIM_SOURCE_DIR) + "/tests/calibration/data/";
const std::string kScenario = kData + "speculative-tiny.json";
// The calibration's tolerance on a ratio of two runs: the profile itself is measured on the
// shared machine, and its noise moves the prediction by about 10% from run to run.
constexpr double kTolerance = 0.2;

std::string fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("servesim_spec_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

nlohmann::json run_json(const std::string& args) {
  const auto r = run_servesim(args + " --json");
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

double output_throughput(const nlohmann::json& run) {
  return run["summary"]["output_tokens_per_s"].get<double>();
}

TEST(SpeculativeSpeedup, SimulatorPredictsTheEnginesNgramSpeedup) {
  const std::string profile_dir = fresh_dir("profile");
  const std::string profile = profile_dir + "/profile.json";
  ASSERT_EQ(run_servesim("calibrate profile --model " + kData +
                         "llama-tiny-calib.json --max-tokens 256 --max-seqs 16"
                         " --max-context 512 --repeats 5 --out " +
                         profile_dir)
                .exit_code,
            0);
  ASSERT_EQ(run_servesim("calibrate fit " + profile_dir + " --out " + profile).exit_code, 0);

  // The engine's speed-up: the median of three interleaved pairs, since the machine's speed
  // drifts between runs of a few seconds.
  std::vector<double> speedups;
  nlohmann::json speculative;
  for (int i = 0; i < 3; ++i) {
    const nlohmann::json with = run_json("engine run " + kScenario);
    const nlohmann::json without =
        run_json("engine run " + kScenario + " --set engine.speculative=null");
    ASSERT_TRUE(with.contains("speculative"));
    speculative = with["speculative"];
    speedups.push_back(output_throughput(with) / output_throughput(without));
  }
  std::sort(speedups.begin(), speedups.end());
  const double engine_speedup = speedups[1];
  const nlohmann::json& measured = speculative["measured"];
  ASSERT_TRUE(measured.is_object()) << speculative.dump();
  // The random model repeats itself, so lookup matches, though not after every step.
  EXPECT_GT(speculative["num_accepted_tokens"].get<int64_t>(), 0);
  ASSERT_LT(measured["match_rate"].get<double>(), 0.5) << measured.dump();

  const std::string calibrated =
      " --set 'cost_model={\"type\": \"calibrated\", \"profile\": \"" + profile + "\"}'";
  const auto sim_speedup = [&](const nlohmann::json& speculation) {
    const nlohmann::json with = run_json("simulate " + kScenario + calibrated +
                                         " --set 'engine.speculative=" + speculation.dump() + "'");
    const nlohmann::json without =
        run_json("simulate " + kScenario + calibrated + " --set engine.speculative=null");
    return output_throughput(with) / output_throughput(without);
  };
  const double predicted = sim_speedup(measured);
  EXPECT_NEAR(predicted / engine_speedup, 1.0, kTolerance)
      << "engine " << engine_speedup << "x, simulator " << predicted << "x with "
      << measured.dump();
  // The steps without a match matter: drafting after every step at the same acceptance would
  // predict a different machine.
  nlohmann::json always = measured;
  always.erase("match_rate");
  const double always_predicted = sim_speedup(always);
  std::printf(
      "speed-up: engine %.3fx (runs %.3f %.3f %.3f), simulator %.3fx, drafting every "
      "step %.3fx\n",
      engine_speedup, speedups[0], speedups[1], speedups[2], predicted, always_predicted);
  EXPECT_GT(std::abs(always_predicted / engine_speedup - 1.0), kTolerance)
      << "the no-match steps made no difference; the check above cannot fail for them";
  std::filesystem::remove_all(profile_dir);
}

}  // namespace
}  // namespace servesim
