// Branches, tool outcomes and loops: frequencies converge to their probabilities.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/sim/agent/agent_harness.h"

namespace servesim {
namespace {

using agent_test::one_workflow;
using agent_test::poisson;
using agent_test::run_agent;
using agent_test::tool;
using agent_test::workload_of;
using nlohmann::json;

constexpr int kSessions = 4000;
// Four standard deviations of a frequency over kSessions draws, at worst (p = 0.5).
constexpr double kTolerance = 4 * 0.5 / 63.2;

json failing_tool(const std::string& id, double p, int retries = 0) {
  json t = tool(1.0);
  t["id"] = id;
  t["failure_probability"] = p;
  t["retries"] = retries;
  return t;
}

TEST(AgentBranch, ArmsRunWithTheirProbabilities) {
  const json branch = {{"type", "branch"},
                       {"arms",
                        {{{"probability", 0.3}, {"steps", {tool(1.0)}}},
                         {{"probability", 0.5}, {"steps", {tool(2.0)}}}}}};
  const auto run = run_agent(workload_of(one_workflow(branch, kSessions), poisson(100)));
  ASSERT_EQ(run.sessions.size(), static_cast<size_t>(kSessions));
  int one = 0, two = 0, none = 0;
  for (const SessionRecord& r : run.sessions) {
    if (std::abs(r.e2e_s() - 1.0) < 1e-9) ++one;
    if (std::abs(r.e2e_s() - 2.0) < 1e-9) ++two;
    if (r.tool_calls == 0) ++none;
  }
  EXPECT_NEAR(one / double(kSessions), 0.3, kTolerance);
  EXPECT_NEAR(two / double(kSessions), 0.5, kTolerance);
  EXPECT_NEAR(none / double(kSessions), 0.2, kTolerance);
  EXPECT_EQ(one + two + none, kSessions);
}

// "Run review only if the tests failed": the review runs in the failed share of sessions.
TEST(AgentBranch, OnOutcomeRunsWhenTheToolFailed) {
  for (double p : {0.0, 0.25, 1.0}) {
    const json review = {
        {"type", "branch"}, {"if_failed", "tests"}, {"then", {tool(5.0)}}, {"else", {tool(0.5)}}};
    const auto run = run_agent(
        workload_of(one_workflow({failing_tool("tests", p), review}, kSessions), poisson(100)));
    int reviewed = 0;
    for (const SessionRecord& r : run.sessions) {
      const bool review_ran = std::abs(r.e2e_s() - 6.0) < 1e-9;
      EXPECT_EQ(review_ran, r.tool_failures == 1);
      reviewed += review_ran;
    }
    EXPECT_NEAR(reviewed / double(kSessions), p, kTolerance) << "p " << p;
  }
}

TEST(AgentBranch, IfSucceededAndNoElse) {
  const json next = {{"type", "branch"}, {"if_succeeded", "t"}, {"then", {tool(2.0)}}};
  const auto ok = run_agent(workload_of(one_workflow({failing_tool("t", 0.0), next}), poisson(1)));
  EXPECT_NEAR(ok.sessions.at(0).e2e_s(), 3.0, 1e-9);
  const auto bad = run_agent(workload_of(one_workflow({failing_tool("t", 1.0), next}), poisson(1)));
  EXPECT_NEAR(bad.sessions.at(0).e2e_s(), 1.0, 1e-9);
}

// A tool fails only when every attempt does: p^(retries + 1).
TEST(AgentBranch, RetriesMakeFailureRarer) {
  const auto run =
      run_agent(workload_of(one_workflow(failing_tool("t", 0.5, 2), kSessions), poisson(100)));
  EXPECT_NEAR(run.summary.tool_calls, 1.0, 1e-12);
  int failed = 0;
  double attempts = 0;
  for (const SessionRecord& r : run.sessions) {
    failed += r.tool_failures;
    attempts += r.tool_attempts;
  }
  EXPECT_NEAR(failed / double(kSessions), 0.125, kTolerance / 2);
  EXPECT_NEAR(attempts / kSessions, 1 + 0.5 + 0.25, 0.05);
}

// Loop until the tests pass, at most 3 times: 1 + p + p^2 iterations on average.
TEST(AgentBranch, LoopUntilSuccessWithACap) {
  const json loop = {{"type", "loop"},
                     {"max_iterations", 3},
                     {"until_succeeds", "t"},
                     {"steps", {failing_tool("t", 0.5)}}};
  const auto run = run_agent(workload_of(one_workflow(loop, kSessions), poisson(100)));
  EXPECT_NEAR(run.summary.tool_calls, 1.75, 0.05);
  const json always_fails = {{"type", "loop"},
                             {"max_iterations", 3},
                             {"until_succeeds", "t"},
                             {"steps", {failing_tool("t", 1.0)}}};
  const auto capped = run_agent(workload_of(one_workflow(always_fails), poisson(1)));
  EXPECT_EQ(capped.sessions.at(0).tool_calls, 3);
  const json fixed = {{"type", "loop"}, {"max_iterations", 4}, {"steps", {tool(1.0)}}};
  const auto four = run_agent(workload_of(one_workflow(fixed), poisson(1)));
  EXPECT_NEAR(four.sessions.at(0).e2e_s(), 4.0, 1e-9);
}

// Workflows mix by weight.
TEST(AgentBranch, WorkflowsMixByWeight) {
  json agent = {{"sessions", kSessions},
                {"workflows",
                 {{{"name", "a"}, {"weight", 3}, {"steps", {tool(1.0)}}},
                  {{"name", "b"}, {"weight", 1}, {"steps", {tool(2.0)}}}}}};
  const auto run = run_agent(workload_of(agent, poisson(100)));
  int a = 0;
  for (const SessionRecord& r : run.sessions) a += r.workflow == "a";
  EXPECT_NEAR(a / double(kSessions), 0.75, kTolerance);
}

}  // namespace
}  // namespace servesim
