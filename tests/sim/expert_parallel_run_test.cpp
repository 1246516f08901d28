// Expert parallelism end to end in the simulator: the scenario's parallel keys (strict), and
// the data-parallel replicas of an expert-parallel deployment stepping in lock-step.
#include <gtest/gtest.h>

#include <string>

#include "models/catalog.h"
#include "models/config_error.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

// Two clients with no think time: both requests arrive at 0 and round-robin puts one on
// each replica; their prompts differ, so their prefills do.
nlohmann::json two_replicas(bool expert_parallel) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "model": "Mixtral-8x7B",
    "gpu": "H100-SXM",
    "parallel": {"tensor_parallel_size": 2, "data_parallel_size": 2},
    "engine": {"max_model_len": 8192},
    "service": "none",
    "workload": {"arrival": {"type": "closed", "clients": 2, "think_time_s": 0},
                 "prompt_tokens": {"type": "uniform", "min": 200, "max": 6000},
                 "output_tokens": 4, "num_requests": 2},
    "seed": 5
  })");
  j["parallel"]["enable_expert_parallel"] = expert_parallel;
  return j;
}

SimulationConfig config_of(const nlohmann::json& j) {
  return parse_scenario(j, "", "test", Catalog()).config;
}

SimulationResult run(const SimulationConfig& c) {
  Simulation sim(c);
  NullObserver observer;
  return sim.run(observer);
}

std::string error_of(nlohmann::json j) {
  try {
    Simulation sim(config_of(j));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ExpertParallelScenario, ParallelKeysAreRead) {
  nlohmann::json j = two_replicas(true);
  j["parallel"]["expert_popularity"] = "zipf";
  j["parallel"]["expert_zipf_exponent"] = 1.2;
  const SimulationConfig c = config_of(j);
  EXPECT_TRUE(c.parallel.enable_expert_parallel);
  EXPECT_EQ(c.parallel.ep(), 4);
  EXPECT_DOUBLE_EQ(c.parallel.expert_zipf_exponent, 1.2);
  j["parallel"].erase("expert_zipf_exponent");
  EXPECT_DOUBLE_EQ(config_of(j).parallel.expert_zipf_exponent, 1.0);  // zipf's default
  EXPECT_DOUBLE_EQ(config_of(two_replicas(true)).parallel.expert_zipf_exponent, 0);
}

TEST(ExpertParallelScenario, BadKeysAndCombinationsAreOneLineErrors) {
  auto parse_error = [](nlohmann::json j) -> std::string {
    try {
      config_of(j);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  nlohmann::json j = two_replicas(true);
  j["parallel"]["expert_popularity"] = "hot";
  EXPECT_NE(parse_error(j).find("expert_popularity"), std::string::npos);
  j["parallel"]["expert_popularity"] = "zipf";
  j["parallel"]["expert_zipf_exponent"] = 9;
  EXPECT_NE(parse_error(j).find("expert_zipf_exponent"), std::string::npos);
  j["parallel"].erase("expert_popularity");
  j["parallel"]["expert_zipf_exponent"] = 1;
  EXPECT_NE(parse_error(j).find("needs \"expert_popularity\": \"zipf\""), std::string::npos);
  j = two_replicas(true);
  j["parallel"]["enable_expert_paralel"] = true;
  EXPECT_NE(parse_error(j).find("enable_expert_paralel"), std::string::npos);

  j = two_replicas(true);
  j["model"] = "Llama-3.1-8B";
  EXPECT_NE(error_of(j).find("needs a mixture-of-experts model"), std::string::npos);
  j = two_replicas(true);
  j["parallel"]["tensor_parallel_size"] = 8;  // EP 16 over 8 experts
  const std::string split = error_of(j);
  EXPECT_NE(split.find("does not divide the 8 experts"), std::string::npos) << split;
  EXPECT_EQ(split.find('\n'), std::string::npos);
}

TEST(ExpertParallelScenario, ReplicasStepInLockStep) {
  // Independent replicas: each request's first token comes when its own prefill ends.
  const SimulationResult apart = run(config_of(two_replicas(false)));
  ASSERT_EQ(apart.summary.completed, 2u);
  EXPECT_GT(apart.summary.ttft.max_s, apart.summary.ttft.mean_s * 1.05);
  // Expert parallel: both prefills end when the slower one does, so do all later steps.
  const SimulationResult together = run(config_of(two_replicas(true)));
  ASSERT_EQ(together.summary.completed, 2u);
  // (The metrics keep latencies to float precision.)
  EXPECT_NEAR(together.summary.ttft.max_s, together.summary.ttft.mean_s, 1e-6);
  EXPECT_NEAR(together.summary.e2e.max_s, together.summary.e2e.mean_s, 1e-6);
  ASSERT_EQ(together.replicas.size(), 2u);
  EXPECT_EQ(together.replicas[0].steps, together.replicas[1].steps);
  EXPECT_DOUBLE_EQ(together.replicas[0].busy_s, together.replicas[1].busy_s);
  EXPECT_NE(apart.replicas[0].busy_s, apart.replicas[1].busy_s);
}

TEST(ExpertParallelScenario, SameInputsSameRun) {
  nlohmann::json j = two_replicas(true);
  j["parallel"]["expert_popularity"] = "zipf";
  j["workload"] = nlohmann::json::parse(R"({"arrival": {"type": "poisson", "rate_qps": 6},
      "prompt_tokens": 500, "output_tokens": 50, "num_requests": 60})");
  const SimulationResult a = run(config_of(j));
  const SimulationResult b = run(config_of(j));
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.summary.tpot.mean_s, b.summary.tpot.mean_s);
  EXPECT_EQ(a.summary.completed, 60u);
}

}  // namespace
}  // namespace servesim
