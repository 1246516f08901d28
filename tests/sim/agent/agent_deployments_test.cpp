// Several deployments in one simulation: an agent's llm steps call the scenario's own
// deployment or one of its "deployments" by name, each its own cluster (memory plan,
// scheduler, cost model, replicas), with its requests counted apart; a step's "fallback"
// takes a call its deployment refused. And the one-line errors of a bad "deployments".
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/catalog.h"
#include "models/config_error.h"
#include "sim/core/observer.h"
#include "sim/core/session_record.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

// A planner on Llama-2-7B (the scenario's own deployment, one A100) and a reviewer on
// TinyLlama (its own H100): plan, a 0.2 s tool, review.
nlohmann::json two_models() {
  return nlohmann::json::parse(R"({
    "model": "Llama-2-7B", "gpu": "A100-80GB", "engine": {"max_model_len": 4096},
    "deployments": [{"name": "reviewer", "model": "TinyLlama-1.1B", "gpu": "H100-SXM",
                     "engine": {"max_model_len": 2048}}],
    "workload": {"arrival": {"type": "poisson", "rate_qps": 2},
      "agent": {"sessions": 40, "workflows": [
        {"name": "w", "system_prompt_tokens": 100, "steps": [
          {"type": "llm", "id": "plan", "new_tokens": 300, "output_tokens": 120},
          {"type": "tool", "id": "run", "latency_s": 0.2, "result_tokens": 50},
          {"type": "llm", "id": "review", "deployment": "reviewer", "new_tokens": 100,
           "output_tokens": 120}]}]}},
    "seed": 3})");
}

class Sessions final : public Observer {
 public:
  void on_session_done(const SessionRecord& r) override { all.push_back(r); }
  std::vector<SessionRecord> all;
};

struct Outcome {
  SimulationResult result;
  std::vector<SessionRecord> sessions;
};

Outcome run(const nlohmann::json& j) {
  Simulation sim(parse_scenario(j, "", "test", Catalog()).config);
  Sessions sessions;
  Outcome r{sim.run(sessions), {}};
  r.sessions = std::move(sessions.all);
  return r;
}

std::string error_of(const nlohmann::json& j) {
  try {
    Simulation sim(parse_scenario(j, "", "test", Catalog()).config);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(AgentDeployments, EachDeploymentServesItsStepsCallsOnItsOwnReplicas) {
  const Outcome r = run(two_models());
  ASSERT_EQ(r.sessions.size(), 40u);
  for (const SessionRecord& s : r.sessions) {
    EXPECT_TRUE(s.ok) << s.id;
    EXPECT_EQ(s.llm_calls, 2);
  }
  ASSERT_EQ(r.result.deployments.size(), 2u);
  EXPECT_EQ(r.result.deployments[0].name, "Llama-2-7B");
  EXPECT_EQ(r.result.deployments[1].name, "reviewer");
  EXPECT_EQ(r.result.deployments[0].summary.completed, 40u);
  EXPECT_EQ(r.result.deployments[1].summary.completed, 40u);
  EXPECT_EQ(r.result.summary.completed, 80u);
  ASSERT_EQ(r.result.replicas.size(), 2u);
  EXPECT_EQ(r.result.replicas[0].deployment, 0u);
  EXPECT_EQ(r.result.replicas[1].deployment, 1u);
  EXPECT_GT(r.result.replicas[0].steps, 0);
  EXPECT_GT(r.result.replicas[1].steps, 0);
  // Each deployment is a `vllm serve` of its own, with its own API server.
  ASSERT_EQ(r.result.stations.size(), 2u);
  EXPECT_EQ(r.result.stations[0].name, "frontend Llama-2-7B");
  EXPECT_EQ(r.result.stations[1].name, "frontend reviewer");
  EXPECT_GT(r.result.stations[1].jobs, 40u);
  // A 1.1B model on an H100 decodes several times faster than a 7B on an A100.
  EXPECT_LT(r.result.deployments[1].summary.tpot.p50_s,
            0.5 * r.result.deployments[0].summary.tpot.p50_s);
}

// A scenario's price_per_gpu_hour holds for every deployment's GPUs, in each one's figures too.
TEST(AgentDeployments, TheScenariosPriceHoldsForEachDeployment) {
  nlohmann::json j = two_models();
  j["price_per_gpu_hour"] = 2.0;
  const Outcome r = run(j);
  ASSERT_EQ(r.result.deployments.size(), 2u);
  const MetricsSummary& reviewer = r.result.deployments[1].summary;
  EXPECT_NEAR(
      reviewer.cost_per_million_output_tokens,
      2.0 * reviewer.duration_s / 3600.0 / static_cast<double>(reviewer.output_tokens) * 1e6, 1e-9);
}

TEST(AgentDeployments, TheRunIsDeterministicAndTheReviewerChangesIt) {
  const Outcome a = run(two_models());
  const Outcome b = run(two_models());
  EXPECT_EQ(a.result.fingerprint, b.result.fingerprint);
  nlohmann::json one = two_models();
  one.erase("deployments");
  one["workload"]["agent"]["workflows"][0]["steps"][2].erase("deployment");
  const Outcome c = run(one);
  EXPECT_NE(a.result.fingerprint, c.result.fingerprint);
  EXPECT_TRUE(c.result.deployments.empty());
  ASSERT_EQ(c.result.replicas.size(), 1u);
  EXPECT_EQ(c.result.summary.completed, 80u);
}

TEST(AgentDeployments, TheRunCountsEveryDeploymentsGpusAndPrice) {
  nlohmann::json j = two_models();
  j["deployments"][0]["parallel"] = {{"data_parallel_size", 2}};
  Simulation sim(parse_scenario(j, "", "test", Catalog()).config);
  EXPECT_EQ(sim.config().metrics.num_gpus, 3);
  const Catalog catalog;
  const double a100 = catalog.resolve_gpu("A100-80GB").price_per_hour_usd;
  const double h100 = catalog.resolve_gpu("H100-SXM").price_per_hour_usd;
  EXPECT_NEAR(sim.config().metrics.price_per_gpu_hour, (a100 + 2 * h100) / 3, 1e-9);
  Sessions sessions;
  const SimulationResult result = sim.run(sessions);
  // Cost per completed session: the three GPUs at their prices over the run's duration.
  ASSERT_TRUE(result.sessions);
  EXPECT_NEAR(result.sessions->cost_usd,
              (a100 + 2 * h100) * result.summary.duration_s / 3600.0 /
                  static_cast<double>(result.sessions->completed),
              1e-12);
  ASSERT_EQ(result.replicas.size(), 3u);
  EXPECT_GT(result.replicas[1].steps + result.replicas[2].steps, 0);
  EXPECT_EQ(result.replicas[2].deployment, 1u);
}

// The scenario's own deployment disaggregated (one prefill and one decode A100), the reviewer
// aggregated beside it: each call goes through its own deployment's path.
TEST(AgentDeployments, TheOwnDeploymentMayBeDisaggregated) {
  nlohmann::json j = two_models();
  j["disaggregation"] = {{"prefill", {{"instances", 1}}}, {"decode", {{"instances", 1}}}};
  Simulation sim(parse_scenario(j, "", "test", Catalog()).config);
  EXPECT_EQ(sim.config().metrics.num_gpus, 3);
  Sessions sessions;
  const SimulationResult result = sim.run(sessions);
  ASSERT_EQ(sessions.all.size(), 40u);
  for (const SessionRecord& s : sessions.all) EXPECT_TRUE(s.ok) << s.id;
  ASSERT_EQ(result.replicas.size(), 3u);
  EXPECT_EQ(result.replicas[0].role, ReplicaRole::kPrefill);
  EXPECT_EQ(result.replicas[1].role, ReplicaRole::kDecode);
  EXPECT_EQ(result.replicas[2].role, ReplicaRole::kAggregated);
  EXPECT_EQ(result.replicas[2].deployment, 1u);
  ASSERT_EQ(result.deployments.size(), 2u);
  EXPECT_EQ(result.deployments[0].summary.completed, 40u);
  EXPECT_EQ(result.deployments[1].summary.completed, 40u);
  EXPECT_GT(result.replicas[0].steps, 0);
  EXPECT_GT(result.replicas[1].steps, 0);
  for (const SessionRecord& s : sessions.all) {
    EXPECT_EQ(s.path.llm_calls, 2) << s.id;
    EXPECT_NEAR(s.path.total_s(), s.e2e_s(), 1e-9 * std::max(1.0, s.e2e_s())) << s.id;
  }
}

// Every deployment is built the same way: the reviewer disaggregated (two prefill H100s, one
// decode H100) beside the aggregated own deployment.
nlohmann::json disaggregated_reviewer() {
  nlohmann::json j = two_models();
  j["deployments"][0]["disaggregation"] = {
      {"prefill", {{"instances", 2}}},
      {"decode", {{"instances", 1}, {"engine", {{"max_num_seqs", 32}}}}},
      {"kv_transfer", {{"link", "nvlink"}}}};
  return j;
}

TEST(AgentDeployments, AMoreDeploymentMayBeDisaggregated) {
  Simulation sim(parse_scenario(disaggregated_reviewer(), "", "test", Catalog()).config);
  EXPECT_EQ(sim.config().metrics.num_gpus, 1 + 3);
  const BuiltDeployment& reviewer = sim.deployments()[1];
  ASSERT_TRUE(reviewer.prefill.has_value());
  EXPECT_EQ(reviewer.serving.scheduler.max_num_seqs, 32);      // the decode role's own flag
  EXPECT_EQ(reviewer.prefill->scheduler.max_model_len, 2048);  // the deployment's engine block
  Sessions sessions;
  const SimulationResult result = sim.run(sessions);
  ASSERT_EQ(sessions.all.size(), 40u);
  for (const SessionRecord& s : sessions.all) EXPECT_TRUE(s.ok) << s.id;
  ASSERT_EQ(result.replicas.size(), 4u);
  EXPECT_EQ(result.replicas[0].role, ReplicaRole::kAggregated);
  EXPECT_EQ(result.replicas[1].role, ReplicaRole::kPrefill);
  EXPECT_EQ(result.replicas[2].role, ReplicaRole::kPrefill);
  EXPECT_EQ(result.replicas[3].role, ReplicaRole::kDecode);
  for (size_t r = 1; r < 4; ++r) {
    EXPECT_EQ(result.replicas[r].deployment, 1u);
    EXPECT_EQ(result.replicas[r].kv_blocks_used_at_end, 0) << r;
  }
  EXPECT_GT(result.replicas[1].steps + result.replicas[2].steps, 0);
  EXPECT_GT(result.replicas[3].steps, 0);
  ASSERT_EQ(result.deployments.size(), 2u);
  EXPECT_EQ(result.deployments[1].summary.completed, 40u);
  // The reviewer's calls crossed a KV transfer; the own deployment's did not.
  for (const SessionRecord& s : sessions.all) {
    EXPECT_NEAR(s.path.total_s(), s.e2e_s(), 1e-9 * std::max(1.0, s.e2e_s())) << s.id;
  }
  // The same run again: the same fingerprint.
  Simulation again(parse_scenario(disaggregated_reviewer(), "", "test", Catalog()).config);
  Observer quiet;
  EXPECT_EQ(again.run(quiet).fingerprint, result.fingerprint);
}

// A more deployment's own cost_model block prices its steps; without one it takes the
// scenario's roofline options.
TEST(AgentDeployments, AMoreDeploymentMayHaveItsOwnCostModel) {
  const auto reviewer_tpot_s = [](const nlohmann::json& j) {
    Simulation sim(parse_scenario(j, "", "test", Catalog()).config);
    Observer quiet;
    return sim.run(quiet).deployments[1].summary.tpot.mean_s;
  };
  const double base = reviewer_tpot_s(two_models());
  nlohmann::json slow = two_models();
  slow["deployments"][0]["cost_model"] = {{"type", "roofline"}, {"memory_efficiency", 0.2}};
  EXPECT_GT(reviewer_tpot_s(slow), 1.5 * base);
  // The scenario's own block alone reaches the reviewer too (no block of its own).
  nlohmann::json scenario_wide = two_models();
  scenario_wide["cost_model"] = {{"type", "roofline"}, {"memory_efficiency", 0.2}};
  EXPECT_GT(reviewer_tpot_s(scenario_wide), 1.5 * base);
  // Its own block wins over the scenario's (the reviewer's steps at the default efficiencies;
  // its calls come at other times, as the slowed planner sends them).
  scenario_wide["deployments"][0]["cost_model"] = {{"type", "roofline"}};
  EXPECT_NEAR(reviewer_tpot_s(scenario_wide), base, 0.05 * base);
}

// The reviewer as a wide expert-parallel server (Mixtral, TP 2 x DP 2, EP 4) with a host KV
// tier: its ranks are replicas of their own, its tier and link its GPUs'.
TEST(AgentDeployments, AMoreDeploymentMayBeAWideEpServerWithAHostKvTier) {
  nlohmann::json j = two_models();
  j["deployments"][0]["model"] = "Mixtral-8x7B";
  j["deployments"][0]["parallel"] = {
      {"tensor_parallel_size", 2}, {"data_parallel_size", 2}, {"enable_expert_parallel", true}};
  j["deployments"][0]["engine"]["kv_offloading_size_gib"] = 16;
  Simulation sim(parse_scenario(j, "", "test", Catalog()).config);
  EXPECT_EQ(sim.config().metrics.num_gpus, 1 + 4);
  EXPECT_GT(sim.deployments()[1].serving.plan.num_host_kv_blocks, 0);
  Sessions sessions;
  const SimulationResult result = sim.run(sessions);
  ASSERT_EQ(sessions.all.size(), 40u);
  for (const SessionRecord& s : sessions.all) EXPECT_TRUE(s.ok) << s.id;
  ASSERT_EQ(result.replicas.size(), 3u);
  EXPECT_EQ(result.replicas[0].host_kv.blocks, 0);  // the own deployment has no tier
  const double h100_pcie = Catalog().resolve_gpu("H100-SXM").pcie_Bps;
  for (size_t r = 1; r < 3; ++r) {
    EXPECT_EQ(result.replicas[r].deployment, 1u);
    EXPECT_EQ(result.replicas[r].host_kv.blocks,
              sim.deployments()[1].serving.plan.num_host_kv_blocks);
    EXPECT_DOUBLE_EQ(result.replicas[r].host_kv.bandwidth_Bps, h100_pcie);
    EXPECT_EQ(result.replicas[r].kv_blocks_used_at_end, 0);
  }
  EXPECT_GT(result.replicas[1].host_kv.stored_blocks + result.replicas[2].host_kv.stored_blocks, 0);
  // A GPU with no PCIe figure cannot carry the tier: the deployment says so.
  SimulationConfig c = parse_scenario(j, "", "test", Catalog()).config;
  c.deployments[0].gpu.pcie_Bps = 0;
  try {
    Simulation bad(c);
    ADD_FAILURE() << "a host tier without a link was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "deployments[0] (\"reviewer\"): engine.kv_offloading_size_gib: GPU H100-SXM has no "
              "PCIe bandwidth (pcie_gbs 0); set engine.kv_offloading_bandwidth_GBps");
  }
}

// The own deployment holds 2,048 tokens, the fallback 8,192: a session's context grows by 1,000
// tokens a call, so its third and fourth calls (prompts of 2,900 and 3,900 tokens) are refused
// by the own deployment and answered by the fallback.
nlohmann::json long_context(bool with_fallback) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "model": "Llama-2-7B", "gpu": "A100-80GB", "engine": {"max_model_len": 2048},
    "deployments": [{"name": "long", "model": "Llama-3.1-8B", "gpu": "H100-SXM",
                     "engine": {"max_model_len": 8192}}],
    "workload": {"arrival": {"type": "poisson", "rate_qps": 1},
      "agent": {"sessions": 10, "workflows": [
        {"name": "w", "steps": [
          {"type": "llm", "new_tokens": 900, "output_tokens": 100},
          {"type": "llm", "new_tokens": 900, "output_tokens": 100},
          {"type": "llm", "new_tokens": 900, "output_tokens": 100},
          {"type": "llm", "new_tokens": 900, "output_tokens": 100}]}]}},
    "seed": 5})");
  if (with_fallback) {
    for (auto& step : j["workload"]["agent"]["workflows"][0]["steps"]) step["fallback"] = "long";
  }
  return j;
}

TEST(AgentDeployments, AFallbackTakesTheCallsTheStepsDeploymentRefuses) {
  const Outcome r = run(long_context(true));
  ASSERT_EQ(r.sessions.size(), 10u);
  for (const SessionRecord& s : r.sessions) {
    EXPECT_TRUE(s.ok) << s.id;
    EXPECT_EQ(s.fallback_calls, 2) << s.id;
    EXPECT_EQ(s.llm_calls, 6) << s.id;       // the two refused calls were sent too
    EXPECT_EQ(s.path.llm_calls, 6) << s.id;  // and are on the critical path
    EXPECT_NEAR(s.path.total_s(), s.e2e_s(), 1e-9 * std::max(1.0, s.e2e_s())) << s.id;
    // Every answer entered the context: the prompts were 900, 1,900, 2,900 (twice), 3,900
    // (twice).
    EXPECT_EQ(s.input_tokens, 900 + 1900 + 2 * 2900 + 2 * 3900) << s.id;
    EXPECT_EQ(s.output_tokens, 400) << s.id;
  }
  ASSERT_EQ(r.result.deployments.size(), 2u);
  EXPECT_EQ(r.result.deployments[0].summary.completed, 20u);
  EXPECT_EQ(r.result.deployments[0].summary.requests, 40u);
  EXPECT_EQ(r.result.deployments[1].summary.completed, 20u);
}

TEST(AgentDeployments, WithoutTheFallbackTheRefusedCallsEndTheirSessions) {
  const Outcome r = run(long_context(false));
  ASSERT_EQ(r.sessions.size(), 10u);
  for (const SessionRecord& s : r.sessions) {
    EXPECT_FALSE(s.ok) << s.id;
    EXPECT_EQ(s.fallback_calls, 0) << s.id;
  }
  EXPECT_EQ(r.result.deployments[1].summary.requests, 0u);
}

TEST(AgentDeployments, BadDeploymentsAreOneLineErrorsNamingTheKey) {
  nlohmann::json j = two_models();
  j["workload"]["agent"]["workflows"][0]["steps"][2]["deployment"] = "reviewr";
  EXPECT_EQ(error_of(j),
            "workload.agent.workflows[0].steps[2] (\"review\"): deployment \"reviewr\" is not "
            "a deployment of this scenario (did you mean 'reviewer'?); it has \"Llama-2-7B\" and "
            "\"reviewer\" (add more under the scenario's \"deployments\")");

  j = two_models();
  j["workload"]["agent"]["workflows"][0]["steps"][2]["fallback"] = "reviewer";
  EXPECT_EQ(error_of(j),
            "workload.agent.workflows[0].steps[2] (\"review\"): fallback names the step's own "
            "deployment; name another one, or omit it");

  j = two_models();
  j["deployments"][0]["name"] = "Llama-2-7B";
  EXPECT_EQ(error_of(j),
            "test: deployments[0]: name \"Llama-2-7B\" is the scenario's own deployment (named "
            "after its model); give this one another name");

  j = two_models();
  j["deployments"].push_back(j["deployments"][0]);
  EXPECT_EQ(error_of(j), "test: deployments[1]: name \"reviewer\" is used twice");

  j = two_models();
  j["deployments"][0]["engine"]["scheduling_policy"] = "priority";
  EXPECT_EQ(error_of(j),
            "test: deployments[0]: engine.scheduling_policy applies to every deployment of the "
            "scenario: set it in the top-level engine block");

  j = two_models();
  j["deployments"][0]["gpus"] = "H100-SXM";
  EXPECT_EQ(error_of(j), "test: deployments[0]: unknown key 'gpus' (did you mean 'gpu'?)");

  j = two_models();
  j["deployments"] = nlohmann::json::array();
  EXPECT_EQ(error_of(j),
            "test: deployments: must be a non-empty array of deployments ({\"name\", \"model\", "
            "\"gpu\", ...}) that llm steps call by name");

  j = two_models();
  j["deployments"][0]["engine"]["max_model_len"] = 256;
  EXPECT_EQ(error_of(j),
            "workload.agent.workflows[0].steps[2] (\"review\"): new_tokens cannot fit "
            "max_model_len 256 of \"reviewer\": the system prompt (100) + the least new and "
            "output tokens (220) exceed it; shorten them or raise "
            "deployments[0].engine.max_model_len");

  j = two_models();
  j["workload"]["agent"]["record_trace"] = true;
  EXPECT_EQ(error_of(j),
            "deployments: a session trace has no deployment per call yet, so one run with "
            "several deployments can neither record nor replay one (drop agent.record_trace / "
            "agent.trace)");

  j = two_models();
  j["workload"] = {{"arrival", {{"type", "poisson"}, {"rate_qps", 1}}},
                   {"prompt_tokens", 100},
                   {"output_tokens", 10},
                   {"num_requests", 10}};
  EXPECT_EQ(error_of(j),
            "deployments: only an agent workload's llm steps call another deployment (by its "
            "\"deployment\"); other workloads send every request to the scenario's own: remove "
            "\"deployments\" or simulate each deployment apart");

  j = disaggregated_reviewer();
  j["deployments"][0]["router"] = "least_kv";
  EXPECT_EQ(error_of(j),
            "test: deployments[0]: router does not apply to a disaggregated deployment: set "
            "disaggregation.prefill_router and disaggregation.decode_router");

  j = disaggregated_reviewer();
  j["deployments"][0]["parallel"] = {{"data_parallel_size", 2}};
  EXPECT_EQ(error_of(j),
            "deployments[0] (\"reviewer\"): parallel.data_parallel_size must be 1 with "
            "disaggregation: set disaggregation.prefill.instances and "
            "disaggregation.decode.instances instead");

  j = disaggregated_reviewer();
  j["deployments"][0]["disaggregation"]["decode"]["engine"]["batching"] = "static";
  EXPECT_EQ(error_of(j),
            "test: deployments[0].disaggregation.decode: engine.batching applies to every "
            "deployment of the scenario: set it in the top-level engine block");

  j = disaggregated_reviewer();
  j["deployments"][0]["disaggregation"]["prefill"]["engine"] = {{"max_model_len", 256}};
  EXPECT_EQ(error_of(j).rfind("workload.agent.workflows[0].steps[2] (\"review\"): new_tokens "
                              "cannot fit max_model_len 256 of \"reviewer\"",
                              0),
            0u)
      << error_of(j);

  j = two_models();
  j["deployments"][0]["cost_model"] = {{"type", "measured"}};
  EXPECT_EQ(error_of(j),
            "test: deployments[0].cost_model: type must be \"roofline\" or \"calibrated\" (got "
            "\"measured\")");

  j = two_models();
  j["deployments"][0]["model"] = "Llama-3.1-405B";
  j["deployments"][0]["gpu"] = "L4";
  const std::string too_big = error_of(j);
  EXPECT_EQ(too_big.rfind("deployments[0] (\"reviewer\"): ", 0), 0u) << too_big;
}

}  // namespace
}  // namespace servesim
