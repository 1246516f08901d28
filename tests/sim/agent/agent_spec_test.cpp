// Bad workflows: each a one-line ConfigError naming the step and the fix.
#include <gtest/gtest.h>

#include "models/config_error.h"
#include "tests/sim/agent/agent_harness.h"

namespace servesim {
namespace {

using agent_test::llm;
using agent_test::one_workflow;
using agent_test::tool;
using nlohmann::json;

std::string error_of(const json& agent, const AgentLimits& limits = {{{"m", 0}}, {}}) {
  try {
    AgentSpec::from_json(agent, "workload.agent", "", limits);
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return what;
  }
  return "no error";
}

std::string workflow_error(const json& steps, const json& extra = json::object()) {
  return error_of(one_workflow(steps, 1, extra));
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

json tool_with_id(const std::string& id) {
  json t = tool(1.0);
  t["id"] = id;
  return t;
}

TEST(AgentSpecErrors, BranchOnAnUnknownStep) {
  const json branch = {{"type", "branch"}, {"if_failed", "tests"}, {"then", {tool(1.0)}}};
  const std::string e = workflow_error({tool_with_id("lint"), branch});
  EXPECT_HAS(e, "workload.agent.workflows[0].steps[1]: if_failed names \"tests\"");
  EXPECT_HAS(e, "no earlier step's id");
  // A step written after the branch is no dependency it can have either.
  EXPECT_HAS(workflow_error({branch, tool_with_id("tests")}), "no earlier step's id");
}

TEST(AgentSpecErrors, BranchOnAnLlmStep) {
  json plan = llm(10, 10);
  plan["id"] = "plan";
  const json branch = {{"type", "branch"}, {"if_failed", "plan"}, {"then", {tool(1.0)}}};
  EXPECT_HAS(workflow_error({plan, branch}), "is not a tool step");
}

TEST(AgentSpecErrors, LoopWithoutACap) {
  const json loop = {{"type", "loop"}, {"steps", {tool(1.0)}}};
  EXPECT_HAS(workflow_error(loop), "steps[0]: max_iterations is required: a loop needs a cap");
  json zero = loop;
  zero["max_iterations"] = 0;
  EXPECT_HAS(workflow_error(zero), "max_iterations");
  json huge = loop;
  huge["max_iterations"] = 10001;
  EXPECT_HAS(workflow_error(huge), "max_iterations must be at most 10000");
  // The cap itself runs, even with a body that takes no time.
  const json nothing = {{"type", "branch"},
                        {"arms", {{{"probability", 0.0}, {"steps", {tool(1.0)}}}}}};
  json instant = {{"type", "loop"}, {"max_iterations", 10000}, {"steps", {nothing}}};
  EXPECT_EQ(workflow_error({instant, tool(1.0)}), "no error");
  const auto run = agent_test::run_agent(
      agent_test::workload_of(one_workflow({instant, tool(1.0)}), agent_test::poisson(1)));
  EXPECT_NEAR(run.sessions.at(0).e2e_s(), 1.0, 1e-9);
}

TEST(AgentSpecErrors, LoopUntilAToolOutsideIt) {
  const json loop = {
      {"type", "loop"}, {"max_iterations", 3}, {"until_succeeds", "t"}, {"steps", {tool(1.0)}}};
  EXPECT_HAS(workflow_error({tool_with_id("t"), loop}), "inside the loop's steps");
}

TEST(AgentSpecErrors, ProbabilityOutsideZeroOne) {
  const json arm = {{"probability", 1.5}, {"steps", {tool(1.0)}}};
  const json branch = {{"type", "branch"}, {"arms", {arm}}};
  EXPECT_HAS(workflow_error(branch), "arms[0]: probability must be in [0, 1], got 1.5");
  const json half = {{"probability", 0.6}, {"steps", {tool(1.0)}}};
  EXPECT_HAS(workflow_error(json{{"type", "branch"}, {"arms", {half, half}}}),
             "probabilities sum to 1.2");
  json t = tool(1.0);
  t["failure_probability"] = -0.1;
  EXPECT_HAS(workflow_error(t), "failure_probability must be in [0, 1]");
}

TEST(AgentSpecErrors, SummaryLongerThanTheHistory) {
  // After 2 calls of at least 10 + 10 tokens the history holds 40 tokens: 40 is not shorter.
  const json policy = {{"summarize", {{"every_llm_calls", 2}, {"summary_tokens", 40}}}};
  const std::string e = workflow_error({llm(10, 10), llm(30, 30)}, {{"context", policy}});
  EXPECT_HAS(e, "context.summarize: summary_tokens 40 is not below the 40 tokens");
  EXPECT_HAS(e, "lower summary_tokens or raise every_llm_calls");
  const json shorter = {{"summarize", {{"every_llm_calls", 2}, {"summary_tokens", 39}}}};
  EXPECT_EQ(workflow_error({llm(10, 10), llm(30, 30)}, {{"context", shorter}}), "no error");
}

TEST(AgentSpecErrors, PromptThatCannotFitMaxModelLen) {
  const json agent = one_workflow(llm(100, 50), 1, {{"system_prompt_tokens", 900}});
  const std::string e = error_of(agent, {{{"m", 1024}}, {}});
  EXPECT_HAS(e, "steps[0]: new_tokens cannot fit max_model_len 1024");
  EXPECT_HAS(e, "raise engine.max_model_len");
  EXPECT_EQ(error_of(agent, {{{"m", 1050}}, {}}), "no error");
}

TEST(AgentSpecErrors, AnotherDeployment) {
  json call = llm(10, 10);
  call["deployment"] = "reviewer";
  EXPECT_HAS(error_of(one_workflow(call), {{{"Llama-3.1-8B", 0}}, {}}),
             "deployment \"reviewer\" is not a deployment of this scenario");
}

TEST(AgentSpecErrors, StructureAndKeys) {
  EXPECT_HAS(workflow_error(json{{"type", "think"}}), "type must be llm, tool, sequence");
  json typo = tool(1.0);
  typo["latency"] = 2;
  EXPECT_HAS(workflow_error(typo), "unknown key 'latency'");
  EXPECT_HAS(workflow_error(json::array()), "steps: must be a non-empty array");
  EXPECT_HAS(workflow_error({tool_with_id("a"), tool_with_id("a")}), "is used by two steps");
  EXPECT_HAS(workflow_error(json{{"type", "tool"}, {"result_tokens", 5}}), "latency_s is required");
  const json subtask = {{"type", "sequence"}, {"subtask", true}, {"steps", {tool(1.0)}}};
  EXPECT_HAS(workflow_error(subtask), "subtask_summary_tokens: is required");
  json two = one_workflow(tool(1.0));
  two["workflows"].push_back(two["workflows"][0]);
  EXPECT_HAS(error_of(two), "is used by two workflows");
  EXPECT_HAS(error_of(json{{"workflows", json::array()}}), "workflows must be a non-empty array");
}

TEST(AgentSpecErrors, WorkloadKeys) {
  auto workload_error = [](json w) {
    try {
      WorkloadSpec::from_json(w, "", "workload");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const json agent = one_workflow(tool(1.0));
  const json poisson = {{"type", "poisson"}, {"rate_qps", 1}};
  EXPECT_EQ(workload_error({{"arrival", poisson}, {"agent", agent}}), "no error");
  EXPECT_HAS(workload_error({{"arrival", poisson}, {"agent", agent}, {"num_requests", 5}}),
             "num_requests is not allowed with \"agent\"");
  json endless = agent;
  endless.erase("sessions");
  EXPECT_HAS(workload_error({{"arrival", poisson}, {"agent", endless}}),
             "give agent.sessions or duration_s");
  EXPECT_EQ(workload_error({{"arrival", poisson}, {"agent", endless}, {"duration_s", 60}}),
            "no error");
  EXPECT_HAS(workload_error({{"agent", agent}}), "arrival is required with \"agent\"");
  const json stepped = {{"type", "stepped"}, {"steps", {1}}, {"step_duration_s", 1}};
  EXPECT_EQ(workload_error({{"arrival", stepped}, {"agent", endless}}), "no error");
  EXPECT_HAS(workload_error({{"arrival", stepped}, {"agent", agent}, {"duration_s", 5}}),
             "duration_s is not allowed with a stepped arrival");
  WorkloadSpec w = WorkloadSpec::from_json({{"arrival", poisson}, {"agent", agent}}, "", "w");
  EXPECT_THROW(make_request_source(w), ConfigError);
}

}  // namespace
}  // namespace servesim
