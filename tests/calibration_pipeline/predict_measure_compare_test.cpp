// Issue #17's loop on this machine, all through real HTTP on 127.0.0.1, as a user closes it:
// calibrate the CPU engine on the ~4M-parameter Llama-tiny-calib, serve the model with
// `engine serve` and the scenario's engine flags, load-test it with a stepped closed loop,
// simulate the same scenario with the fitted profile, and hold the measured run against the
// prediction with `compare --max-error`. The bound is loose because the measured run shares two
// cores between the engine, its HTTP thread and the load generator while the profile was
// measured in-process (three runs on a loaded machine were 8-33% apart, docs/loadtest.md);
// a prediction that misses the profile, the flags or the service is off by far more.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/cli/cli_runner.h"
#include "tests/loadtest/engine_serve_process.h"

namespace servesim {
namespace {

using ::testing::HasSubstr;
using testing::run_servesim;

const std::string kData = std::string(SERVESIM_SOURCE_DIR) + "/tests/calibration/data/";
const std::string kScenario = kData + "serve-loop-tiny.json";
// The scenario's engine flags, as `vllm serve` would be given them.
const std::string kServe =
    "--model " + kData +
    "llama-tiny-calib.json --served-model-name Llama-tiny-calib --max-model-len 512"
    " --max-num-seqs 8 --max-num-batched-tokens 256";

std::string fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("servesim_loop_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

TEST(PredictMeasureCompare, ServeLoadtestSimulateCompareOverLoopback) {
  const std::string profile_dir = fresh_dir("profile");
  const std::string profile = profile_dir + "/profile.json";
  const auto measured_grid = run_servesim("calibrate profile --model " + kData +
                                          "llama-tiny-calib.json --max-tokens 256 --max-seqs 16"
                                          " --max-context 512 --repeats 3 --out " +
                                          profile_dir);
  ASSERT_EQ(measured_grid.exit_code, 0) << measured_grid.err;
  const auto fit = run_servesim("calibrate fit " + profile_dir + " --out " + profile);
  ASSERT_EQ(fit.exit_code, 0) << fit.err;

  testing::EngineServeProcess server(kServe);
  const std::string url = server.wait_for_url();
  ASSERT_FALSE(url.empty()) << "engine serve did not start: " << server.log();
  const std::string measured = fresh_dir("measured");
  const auto load =
      run_servesim("loadtest " + url + " --scenario " + kScenario + " --quiet --out " + measured);
  ASSERT_EQ(load.exit_code, 0) << load.err;

  const std::string simulated = fresh_dir("simulated");
  const auto sim = run_servesim("simulate " + kScenario +
                                " --set 'cost_model={\"type\": \"calibrated\", \"profile\": \"" +
                                profile + "\"}' --out " + simulated);
  ASSERT_EQ(sim.exit_code, 0) << sim.err;

  const auto compare = run_servesim("compare " + simulated + " " + measured +
                                    " --metrics completed,output_tokens_per_s,tpot_p50,e2e_p50"
                                    " --max-error 60");
  EXPECT_EQ(compare.exit_code, 0) << compare.out << compare.err;
  EXPECT_THAT(compare.out, HasSubstr("measured"));
  EXPECT_THAT(compare.out, HasSubstr("setup against the first run:"));
  // Both runs record the scenario as given and the model by the name it is served under: the
  // keys they share agree, and the rest (the GPU model on one side, the server's answers on
  // the other) is only counted.
  EXPECT_THAT(compare.out, HasSubstr("same setup ("));
  for (const std::string& dir : {profile_dir, measured, simulated})
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace servesim
