#include "serve/loadtest/loadtest_report.h"

#include <gtest/gtest.h>

namespace servesim {
namespace {

TEST(LoadtestJson, ErrorsByCauseAndKnee) {
  LoadtestResult r;
  r.errors[static_cast<size_t>(ErrorCause::kReset)] = 2;
  r.http_status[200] = 5;
  r.http_status[0] = 2;
  const nlohmann::json j =
      loadtest_json(r, LoadtestSetup{}, EndpointUrl::parse("http://h:1"), Knee{1, "why"}, {1, 4});
  EXPECT_EQ(j["errors"]["reset"], 2);
  EXPECT_EQ(j["errors"]["refused"], 0);
  EXPECT_EQ(j["http_status"]["200"], 5);
  EXPECT_EQ(j["http_status"]["none"], 2);
  EXPECT_EQ(j["knee"]["step"], 2);
  EXPECT_EQ(j["knee"]["clients"], 4);
  EXPECT_EQ(j["url"], "http://h:1");
}

TEST(LoadtestSetupJson, TheServersOwnWordsAndTheScenarioAsGiven) {
  LoadtestResult r;
  r.model = "Qwen/Qwen3-32B";
  r.server.models = nlohmann::json::parse(
      R"({"data": [{"id": "other"}, {"id": "Qwen/Qwen3-32B", "max_model_len": 32768,
                                      "owned_by": "vllm"}]})");
  r.server.version = {{"version", "0.12.0"}};
  r.max_connections = 64;
  LoadtestSetup setup;
  setup.servesim_version = "0.1.0";
  setup.git_revision = "abc1234";
  setup.timeout_s = 30;
  const nlohmann::json scenario = {{"workload", {{"prompt_tokens", 1024}}}, {"model", "x"}};
  const nlohmann::json j =
      loadtest_setup_json(r, setup, EndpointUrl::parse("http://h:8000"), "probe", scenario, 7);
  EXPECT_EQ(j["model"]["name"], "Qwen/Qwen3-32B");
  EXPECT_EQ(j["model"]["max_model_len"], 32768);
  EXPECT_EQ(j["model"]["owned_by"], "vllm");
  EXPECT_EQ(j["server_version"], "0.12.0");
  EXPECT_EQ(j["workload"]["prompt_tokens"], 1024);
  EXPECT_TRUE(j["slo"].is_null());
  EXPECT_EQ(j["seed"], 7);
  EXPECT_EQ(j["client"]["max_connections"], 64);
  EXPECT_EQ(j["servesim_version"], "0.1.0");  // as a simulation's setup has them
  EXPECT_EQ(j["git_revision"], "abc1234");
  // A server that answers /version with text, or names no such model: kept as it is, not guessed.
  r.server.version = "v2 build 5";
  r.model = "absent";
  const nlohmann::json k =
      loadtest_setup_json(r, setup, EndpointUrl::parse("http://h:1"), "probe", scenario, 7);
  EXPECT_EQ(k["server_version"], "v2 build 5");
  EXPECT_FALSE(k["model"].contains("max_model_len"));
}

}  // namespace
}  // namespace servesim
