// Speculative decoding in the simulator: acceptance draws against the closed form, tokens
// conserved and runs deterministic, and the known shape of its gain versus load (a large
// TPOT gain at low batch that turns into a loss once verify steps become compute-bound).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "models/catalog.h"
#include "models/config_error.h"
#include "sim/scenario/scenario.h"
#include "sim/run/simulation.h"
#include "sim/serving/simulated_executor.h"

namespace servesim {
namespace {

nlohmann::json scenario(int clients, int num_requests) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "model": "Llama-3.1-8B",
    "gpu": "H100",
    "engine": {"max_model_len": 4096},
    "workload": {"arrival": {"type": "closed", "clients": 1, "think_time_s": 0},
                 "prompt_tokens": 128, "output_tokens": 128, "num_requests": 10},
    "seed": 11
  })");
  j["workload"]["arrival"]["clients"] = clients;
  j["workload"]["num_requests"] = num_requests;
  return j;
}

nlohmann::json with_speculation(nlohmann::json j, double rate) {
  j["engine"]["speculative"] = {
      {"method", "ngram"}, {"num_speculative_tokens", 4}, {"acceptance_rate", rate}};
  return j;
}

SimulationResult run(const nlohmann::json& j) {
  Simulation sim(parse_scenario(j, "", "test", Catalog()).config);
  NullObserver observer;
  return sim.run(observer);
}

TEST(SpeculativeDecoding, AcceptedTokensPerStepMatchTheClosedForm) {
  const Catalog catalog;
  const ModelSpec model = catalog.resolve_model("Llama-3.1-8B");
  const HardwareSpec gpu = catalog.resolve_gpu("H100");
  EngineConfig engine;
  engine.max_model_len = 4096;
  const RooflineCostModel cost(model, gpu, ParallelConfig{}, engine);
  for (double a : {0.3, 0.6, 0.9}) {
    for (int k : {1, 3, 5}) {
      SpeculativeConfig spec;
      spec.method = SpeculativeMethod::kNgram;
      spec.num_speculative_tokens = k;
      spec.prompt_lookup_min = spec.prompt_lookup_max = 3;
      spec.acceptance.assign(static_cast<size_t>(k), a);
      SimulatedExecutor executor(cost, 0);
      executor.enable_speculation(
          std::make_shared<const SpeculativeCostModel>(spec, model, gpu, ParallelConfig{}, engine,
                                                       RooflineOptions{}),
          7);
      // 100,000 verify steps over 1,000 request streams; deterministic, so not flaky.
      double tokens = 0;
      const int n = 100000;
      for (int i = 0; i < n; ++i) {
        tokens += 1 + executor.accepted_drafts(static_cast<uint64_t>(i % 1000),
                                               static_cast<uint64_t>(100 + 7 * (i / 1000)), k);
      }
      const double expected = (1 - std::pow(a, k + 1)) / (1 - a);
      EXPECT_NEAR(tokens / n, expected, 0.02 * expected) << "a " << a << " k " << k;
    }
  }
}

TEST(SpeculativeDecoding, ConservesTokensAndIsDeterministic) {
  const nlohmann::json j = with_speculation(scenario(4, 40), 0.7);
  const SimulationResult a = run(j);
  const SimulationResult b = run(j);
  EXPECT_EQ(a.summary.completed, 40u);
  EXPECT_EQ(a.summary.output_tokens, 40u * 128);  // max_tokens honoured inside accepted runs
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.summary.tpot.mean_s, b.summary.tpot.mean_s);
  nlohmann::json other = j;
  other["seed"] = 12;
  EXPECT_NE(run(other).fingerprint, a.fingerprint);
  // Fewer steps than tokens: about 128 / E per request at one client per slot.
  const SimulationResult plain = run(scenario(4, 40));
  ASSERT_EQ(a.replicas.size(), 1u);
  EXPECT_LT(a.replicas[0].steps, plain.replicas[0].steps * 0.5);
}

TEST(SpeculativeDecoding, WithoutAMatchADecodeStepCarriesNoDrafts) {
  // One client, so every step after the prefill is one decode: steps per request follow
  // 1 + 127 / (1 + r (E - 1)) for 128 output tokens at match rate r.
  const double a = 0.6;
  const double e = (1 - std::pow(a, 5)) / (1 - a);
  std::vector<int64_t> steps;
  for (double r : {1.0, 0.5, 0.2}) {
    nlohmann::json j = with_speculation(scenario(1, 200), a);
    j["engine"]["speculative"]["match_rate"] = r;
    const SimulationResult result = run(j);
    ASSERT_EQ(result.summary.output_tokens, 200u * 128);
    const double expected = 200 * (1 + 127 / (1 + r * (e - 1)));
    EXPECT_NEAR(static_cast<double>(result.replicas[0].steps), expected, 0.03 * expected)
        << "match rate " << r;
    steps.push_back(result.replicas[0].steps);
  }
  EXPECT_LT(steps[0], steps[1]);
  EXPECT_LT(steps[1], steps[2]);
}

TEST(SpeculativeDecoding, GainsAtLowBatchAndLosesAtHighBatch) {
  std::vector<double> ratio;  // TPOT with speculation / without
  for (int clients : {1, 16, 256}) {
    const int requests = std::max(8, clients * 2);
    const double plain = run(scenario(clients, requests)).summary.tpot.mean_s;
    const double spec = run(with_speculation(scenario(clients, requests), 0.6)).summary.tpot.mean_s;
    ratio.push_back(spec / plain);
  }
  EXPECT_LT(ratio[0], 0.6);       // E = 2.31 tokens per step for a little more than one step
  EXPECT_GT(ratio[1], ratio[0]);  // the gain shrinks with the batch
  EXPECT_GT(ratio[2], 1.0);       // and turns into a loss: 5 tokens per sequence compute-bound
}

// Only decode instances speculate in a disaggregated deployment (a prefill instance's one
// token has no draft before it). Requests arrive one at a time, so the decode instance often
// has nothing to run while a request's KV arrives; such a step used to abort the run.
TEST(SpeculativeDecoding, ADisaggregatedDeploymentSpeculatesOnItsDecodeInstances) {
  nlohmann::json j = scenario(1, 40);
  j["workload"]["arrival"] = {{"type", "poisson"}, {"rate_qps", 2}};
  j["disaggregation"] = {{"prefill", {{"instances", 1}}}, {"decode", {{"instances", 1}}}};
  const SimulationResult plain = run(j);
  const SimulationResult spec = run(with_speculation(j, 0.7));
  EXPECT_EQ(spec.summary.completed, 40u);
  EXPECT_EQ(spec.summary.output_tokens, 40u * 128);
  ASSERT_EQ(spec.replicas.size(), 2u);  // prefill, then decode
  EXPECT_EQ(spec.replicas[0].steps, plain.replicas[0].steps);
  EXPECT_LT(spec.replicas[1].steps, plain.replicas[1].steps * 0.7);
  EXPECT_LT(spec.summary.tpot.mean_s, plain.summary.tpot.mean_s * 0.6);
}

TEST(SpeculativeDecoding, RefusesUnsupportedPolicies) {
  nlohmann::json j = with_speculation(scenario(1, 4), 0.6);
  j["engine"]["batching"] = "static";
  EXPECT_THROW(run(j), ConfigError);
  j = with_speculation(scenario(1, 4), 0.6);
  j["parallel"] = {{"pipeline_parallel_size", 2}};
  EXPECT_THROW(run(j), ConfigError);
}

}  // namespace
}  // namespace servesim
