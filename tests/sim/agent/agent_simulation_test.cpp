// Agent workloads through the whole simulator: prefix reuse across a session's calls shows
// up in the engine's prefix-cache hit rate, the critical path sums to each session's E2E with
// the service path in it, a context that outgrows max_model_len fails its session, and the
// workflows are checked against the deployment when the scenario is parsed (with the message
// the simulation would give) and when the simulation is built.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "models/catalog.h"
#include "models/config_error.h"
#include "sim/agent/agent_workload.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

using nlohmann::json;

class Sessions final : public Observer {
 public:
  void on_session_done(const SessionRecord& r) override { records.push_back(r); }
  std::vector<SessionRecord> records;
};

// Llama-2-7B / A100: each session plans, then calls a tool and the model three times.
json scenario(const json& context = json(), int max_model_len = 4096) {
  json call = {{"type", "llm"}, {"new_tokens", 200}, {"output_tokens", 64}};
  json tool = {{"type", "tool"}, {"latency_s", 0.2}, {"result_tokens", 300}};
  json workflow = {{"name", "agent"},
                   {"system_prompt_tokens", 500},
                   {"steps", {call, tool, call, tool, call, tool, call}}};
  if (!context.is_null()) workflow["context"] = context;
  return {{"model", "Llama-2-7B"},
          {"gpu", "A100-80GB"},
          {"engine", {{"max_model_len", max_model_len}}},
          {"workload",
           {{"arrival", {{"type", "poisson"}, {"rate_qps", 2}}},
            {"agent", {{"sessions", 40}, {"workflows", {workflow}}}}}},
          {"seed", 3}};
}

struct Outcome {
  SimulationResult result;
  std::vector<SessionRecord> sessions;
};

Outcome run(const json& j, const std::vector<std::string>& overrides = {}) {
  json scenario_json = j;
  apply_overrides(scenario_json, overrides);
  Simulation sim(parse_scenario(scenario_json, "", "test", Catalog()).config);
  Sessions observer;
  Outcome o{sim.run(observer), {}};
  o.sessions = observer.records;
  return o;
}

TEST(AgentSimulation, SessionContextHitsThePrefixCache) {
  const Outcome cached = run(scenario());
  ASSERT_TRUE(cached.result.sessions.has_value());
  EXPECT_EQ(cached.result.sessions->completed, 40u);
  // Each later call re-reads the system prompt and the session's context so far.
  EXPECT_GT(cached.result.summary.prefix_cache_hit_rate, 0.5);
  double cached_tokens = 0;
  for (const SessionRecord& r : cached.sessions)
    cached_tokens += static_cast<double>(r.cached_tokens);
  EXPECT_GT(cached_tokens, 0);
  const Outcome cold = run(scenario(), {"engine.enable_prefix_caching=false"});
  EXPECT_EQ(cold.result.summary.prefix_cache_hit_rate, 0);
  EXPECT_GT(cold.result.sessions->path.prefill_s, cached.result.sessions->path.prefill_s);
}

TEST(AgentSimulation, PrefixAffinityKeepsASessionsCallsWithItsContext) {
  // Four replicas: round robin sends a session's calls to different ones, each of which must
  // prefill the context again; prefix_affinity keeps them where the context is cached, and
  // still spreads the sessions (they share one workflow's system prompt group).
  const std::vector<std::string> dp = {"parallel.data_parallel_size=4"};
  std::vector<std::string> affinity = dp;
  affinity.push_back("cluster={\"router\": \"prefix_affinity\"}");
  const Outcome spread = run(scenario(), dp);
  const Outcome kept = run(scenario(), affinity);
  ASSERT_EQ(kept.result.sessions->completed, 40u);
  EXPECT_GT(kept.result.summary.prefix_cache_hit_rate,
            spread.result.summary.prefix_cache_hit_rate + 0.1);
  EXPECT_LT(kept.result.sessions->path.prefill_s, spread.result.sessions->path.prefill_s);
  ASSERT_EQ(kept.result.replicas.size(), 4u);
  for (const ReplicaSummary& r : kept.result.replicas) EXPECT_GT(r.steps, 0) << "idle replica";
}

TEST(AgentSimulation, CriticalPathSumsToE2EThroughTheServicePath) {
  const Outcome o = run(scenario());
  ASSERT_EQ(o.sessions.size(), 40u);
  for (const SessionRecord& r : o.sessions) {
    ASSERT_TRUE(r.ok);
    EXPECT_NEAR(r.path.total_s(), r.e2e_s(), 1e-6) << r.id;
    EXPECT_EQ(r.path.llm_calls, 4);
    EXPECT_EQ(r.path.tool_calls, 3);
    EXPECT_NEAR(r.path.tool_s, 0.6, 1e-9);
    EXPECT_GT(r.path.service_s, 0);  // vLLM's API server in front of the engine
    EXPECT_LE(r.start_s, r.first_token_s);
    EXPECT_LE(r.first_token_s, r.finish_s);
  }
  EXPECT_EQ(o.result.summary.requests, 160u);
}

// Over eight calls a summary every two keeps the prompts short enough to pay for the
// summaries' own prompts: 16,772 prompt tokens per session instead of 21,392. By hand: kept,
// call k reads 700 + 564 (k - 1) tokens (500 system + 200 new; each call adds 264, each tool
// 300); summarised, the first pair reads 700 + 1264 + 1329 (the summary: 500 + 828 + 1), the
// three others 1100 + 1664 + 1729 from a 100-token summary plus a tool result.
TEST(AgentSimulation, SummariesShortenThePrompts) {
  auto long_session = [](const json& context) {
    json j = scenario(context, 32768);
    j["model"] = "Llama-3.1-8B";  // a context of 8 calls outgrows Llama-2's 4,096 tokens
    json& steps = j["workload"]["agent"]["workflows"][0]["steps"];
    steps =
        json::array({{{"type", "loop"}, {"max_iterations", 8}, {"steps", {steps[0], steps[1]}}}});
    return j;
  };
  const Outcome keep = run(long_session(json()));
  EXPECT_DOUBLE_EQ(keep.result.sessions->input_tokens, 8 * 700 + 564 * 28);
  const json policy = {{"summarize", {{"every_llm_calls", 2}, {"summary_tokens", 100}}}};
  const Outcome summarized = run(long_session(policy));
  EXPECT_DOUBLE_EQ(summarized.result.sessions->input_tokens, 3293 + 3 * 4493);
  EXPECT_DOUBLE_EQ(summarized.result.sessions->llm_calls, 12.0);  // 8 calls + 4 summaries
}

// The context outgrows max_model_len at the third call: the engine refuses it (HTTP 400 in
// vLLM) and the session fails, counted apart.
TEST(AgentSimulation, ContextBeyondMaxModelLenFailsTheSession) {
  const Outcome o = run(scenario(json(), 1600));
  ASSERT_TRUE(o.result.sessions.has_value());
  EXPECT_EQ(o.result.sessions->failed, 40u);
  EXPECT_EQ(o.result.sessions->completed, 0u);
  for (const SessionRecord& r : o.sessions) EXPECT_EQ(r.cause, FailureCause::kTooLong);
}

TEST(AgentSimulation, WorkflowsAreCheckedAgainstTheDeployment) {
  json j = scenario(json(), 600);  // 500 system + 200 new + 64 output cannot fit
  EXPECT_THROW(
      {
        try {
          run(j);
        } catch (const ConfigError& e) {
          EXPECT_NE(std::string(e.what()).find("cannot fit max_model_len 600"), std::string::npos)
              << e.what();
          throw;
        }
      },
      ConfigError);
  j = scenario();
  j["workload"]["agent"]["workflows"][0]["steps"][0]["deployment"] = "Llama-3.1-70B";
  EXPECT_THROW(run(j), ConfigError);
  j["workload"]["agent"]["workflows"][0]["steps"][0]["deployment"] = "Llama-2-7B";
  EXPECT_NO_THROW(run(j));
}

std::string config_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// plan and sweep parse scenarios without building a Simulation at once: parsing alone refuses
// a bad workflow, with the very message the simulation gives.
TEST(AgentSimulation, WorkflowsAreCheckedWhenTheScenarioIsParsed) {
  const json j = scenario(json(), 600);
  const std::string at_parse = config_error_of([&] { parse_scenario(j, "", "test", Catalog()); });
  const WorkloadSpec workload = WorkloadSpec::from_json(j["workload"], "", "workload");
  const std::string at_run = config_error_of([&] {
    parse_agent_workload(workload, AgentLimits{{{"Llama-2-7B", 600}}, {}});
  });
  EXPECT_NE(at_parse.find("workload.agent.workflows[0].steps[0]: new_tokens cannot fit "
                          "max_model_len 600"),
            std::string::npos)
      << at_parse;
  EXPECT_EQ(at_parse, at_run);
  EXPECT_EQ(at_parse.find('\n'), std::string::npos);
  // Without engine.max_model_len it is the model's own (4,096 for Llama-2-7B), as in the plan.
  json model_default = scenario();
  model_default.erase("engine");
  EXPECT_EQ(config_error_of([&] { parse_scenario(model_default, "", "test", Catalog()); }), "");
}

TEST(AgentSimulation, SameSeedSameRun) {
  EXPECT_EQ(run(scenario()).result.fingerprint, run(scenario()).result.fingerprint);
}

}  // namespace
}  // namespace servesim
