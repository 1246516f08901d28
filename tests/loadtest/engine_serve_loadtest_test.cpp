// `servesim loadtest` against `servesim engine serve` on the serve tests' tiny CPU model
// (tests/serve/data/tiny-serve-model.json, answers in microseconds): the two halves of
// issue #17 together — a short stepped closed-loop run over loopback, every request answered
// with the asked output length, the server's /metrics in the time series.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_runner.h"
#include "tests/loadtest/engine_serve_process.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

const std::string kTinyModel =
    std::string(SERVESIM_SOURCE_DIR) + "/tests/serve/data/tiny-serve-model.json";

TEST(EngineServeLoadtest, SteppedClosedLoopOverLoopback) {
  testing::EngineServeProcess server("--model " + kTinyModel +
                                     " --max-model-len 512 --max-num-seqs 8");
  const std::string url = server.wait_for_url();
  ASSERT_FALSE(url.empty()) << "engine serve did not start";
  const fs::path out = fs::temp_directory_path() / ("servesim_e2e_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const auto r = testing::run_servesim(
      "loadtest " + url + " --scenario " + SERVESIM_SOURCE_DIR +
      "/configs/scenarios/loadtest-tiny.json --set model=" + kTinyModel +
      " --set 'workload.arrival.steps=[1,2]'"
      " --set workload.arrival.step_duration_s=1.5 --set workload.output_tokens=8"
      " --set metrics.step_warmup_s=0 --quiet --json --out " +
      out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"], j["loadtest"]["models_response"]["data"][0]["id"]);  // GET /v1/models
  EXPECT_EQ(j["partial"], false);
  EXPECT_GT(j["summary"]["completed"].get<int>(), 0);
  EXPECT_EQ(j["summary"]["rejected"], 0);
  EXPECT_EQ(j["summary"]["timed_out"], 0);
  EXPECT_EQ(j["summary"]["output_tokens"].get<int>(), 8 * j["summary"]["completed"].get<int>());
  EXPECT_EQ(j["loadtest"]["output_length_mismatch"], 0);
  ASSERT_EQ(j["steps"].size(), 2u);
  EXPECT_GT(j["steps"][1]["completed"].get<int>(), 0);
  EXPECT_EQ(j["loadtest"]["timeseries_source"], "server /metrics");
  EXPECT_GT(j["loadtest"]["scrapes"].get<int>(), 0);
  fs::remove_all(out);
}

}  // namespace
}  // namespace servesim
