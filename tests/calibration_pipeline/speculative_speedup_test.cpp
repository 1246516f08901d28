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
constexpr int kPairs = 5;

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

  // The engine's speed-up from five interleaved pairs, as the best throughput with speculation
  // over the best without: on a shared machine other tenants only ever slow a run down (one
  // pair's ratio moved from 0.79 to 1.11 between runs on the CI machine), and the fastest of
  // five runs is the one they disturbed least, as the profile's medians of five repeats are.
  std::vector<double> with_tps, without_tps;
  nlohmann::json speculative;
  for (int i = 0; i < kPairs; ++i) {
    const nlohmann::json with = run_json("engine run " + kScenario);
    const nlohmann::json without =
        run_json("engine run " + kScenario + " --set engine.speculative=null");
    ASSERT_TRUE(with.contains("speculative"));
    speculative = with["speculative"];
    with_tps.push_back(output_throughput(with));
    without_tps.push_back(output_throughput(without));
  }
  const double engine_speedup = *std::max_element(with_tps.begin(), with_tps.end()) /
                                *std::max_element(without_tps.begin(), without_tps.end());
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
  std::string pairs;
  for (int i = 0; i < kPairs; ++i) {
    char pair[32];
    std::snprintf(pair, sizeof pair, " %.0f/%.0f", with_tps[i], without_tps[i]);
    pairs += pair;
  }
  std::printf(
      "speed-up: engine %.3fx (tokens/s with/without:%s), simulator %.3fx, drafting every "
      "step %.3fx\n",
      engine_speedup, pairs.c_str(), predicted, always_predicted);
  EXPECT_GT(std::abs(always_predicted / engine_speedup - 1.0), kTolerance)
      << "the no-match steps made no difference; the check above cannot fail for them";
  std::filesystem::remove_all(profile_dir);
}

}  // namespace
}  // namespace servesim
