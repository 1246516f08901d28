// Sessions against hand-computed schedules: the critical path of small DAGs, parallel groups
// with a concurrency limit against ceil(n / k) * t, closed-loop users, failures.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/sim/agent/agent_harness.h"

namespace servesim {
namespace {

using agent_test::llm;
using agent_test::one_workflow;
using agent_test::poisson;
using agent_test::run_agent;
using agent_test::tool;
using agent_test::workload_of;
using nlohmann::json;

constexpr double kEps = 1e-9;

json parallel(const json& steps, int limit = 0) {
  return {{"type", "parallel"}, {"max_concurrency", limit}, {"steps", steps}};
}
json sequence(const json& steps) {
  return {{"type", "sequence"}, {"steps", steps}};
}

void expect_path_sums_to_e2e(const SessionRecord& r) {
  EXPECT_NEAR(r.path.total_s(), r.e2e_s(), kEps) << "session " << r.id;
}

// llm (1 s: 0.1 queue, 0.2 prefill, 0.7 decode) -> parallel [tool 2.5 | tool 1 -> llm |
// tool 0.5] -> tool 1: the tool of 2.5 s is on the path, E2E = 1 + 2.5 + 1.
TEST(AgentCriticalPath, ParallelGroupTakesItsLongestChild) {
  const json steps = {
      llm(10, 5), parallel({tool(2.5), sequence({tool(1.0), llm(10, 5)}), tool(0.5)}), tool(1.0)};
  const auto run = run_agent(workload_of(one_workflow(steps), poisson(1)));
  ASSERT_EQ(run.sessions.size(), 1u);
  const SessionRecord& r = run.sessions[0];
  EXPECT_TRUE(r.ok);
  EXPECT_NEAR(r.e2e_s(), 4.5, kEps);
  EXPECT_NEAR(r.path.tool_s, 3.5, kEps);
  EXPECT_NEAR(r.path.llm_queue_s, 0.1, kEps);
  EXPECT_NEAR(r.path.prefill_s, 0.2, kEps);
  EXPECT_NEAR(r.path.decode_s, 0.7, kEps);
  EXPECT_NEAR(r.path.service_s, 0.0, kEps);
  EXPECT_EQ(r.path.llm_calls, 1);
  EXPECT_EQ(r.path.tool_calls, 2);
  EXPECT_EQ(r.llm_calls, 2);
  EXPECT_EQ(r.tool_calls, 4);
  expect_path_sums_to_e2e(r);
}

// The same DAG with the middle branch the longest: tool 1.5 -> llm (1 s) = 2.5 s beats 2 s.
TEST(AgentCriticalPath, PathFollowsTheBranchThatEndsLast) {
  const json steps = {llm(10, 5), parallel({tool(2.0), sequence({tool(1.5), llm(10, 5)})}),
                      tool(1.0)};
  const auto run = run_agent(workload_of(one_workflow(steps), poisson(1)));
  const SessionRecord& r = run.sessions.at(0);
  EXPECT_NEAR(r.e2e_s(), 1 + 2.5 + 1, kEps);
  EXPECT_NEAR(r.path.tool_s, 2.5, kEps);
  EXPECT_NEAR(r.path.decode_s, 1.4, kEps);
  EXPECT_EQ(r.path.llm_calls, 2);
  EXPECT_EQ(r.path.tool_calls, 2);
  expect_path_sums_to_e2e(r);
}

class ParallelLimit : public testing::TestWithParam<std::tuple<int, int>> {};

// n equal tool calls of t seconds with at most k at once take ceil(n / k) * t; the path holds
// ceil(n / k) of them (each wave starts when a slot frees).
TEST_P(ParallelLimit, TakesCeilNOverKWaves) {
  const auto [n, k] = GetParam();
  const double t = 2.0;
  json tools = json::array();
  for (int i = 0; i < n; ++i) tools.push_back(tool(t));
  const auto run = run_agent(workload_of(one_workflow({parallel(tools, k)}), poisson(1)));
  const SessionRecord& r = run.sessions.at(0);
  const int waves = k == 0 ? 1 : (n + k - 1) / k;
  EXPECT_NEAR(r.e2e_s(), waves * t, kEps);
  EXPECT_EQ(r.path.tool_calls, waves);
  EXPECT_EQ(r.tool_calls, n);
  expect_path_sums_to_e2e(r);
}

INSTANTIATE_TEST_SUITE_P(Limits, ParallelLimit,
                         testing::Values(std::tuple{7, 3}, std::tuple{7, 1}, std::tuple{7, 0},
                                         std::tuple{6, 3}, std::tuple{5, 5}, std::tuple{5, 8},
                                         std::tuple{1, 1}));

// A slot freed early goes to the next waiting child: limit 2 over tools of 3.5, 1, 1, 1 s runs
// 3.5 | 1 -> 1 -> 1 and ends at 3.5 s with the 3.5 s tool alone on the path; with 2.5 s
// instead, the chain of three ends last and is the path.
TEST(AgentCriticalPath, FreedSlotStartsTheNextChild) {
  const auto run = run_agent(workload_of(
      one_workflow({parallel({tool(3.5), tool(1.0), tool(1.0), tool(1.0)}, 2)}), poisson(1)));
  const SessionRecord& r = run.sessions.at(0);
  EXPECT_NEAR(r.e2e_s(), 3.5, kEps);
  EXPECT_EQ(r.path.tool_calls, 1);
  const auto chain = run_agent(workload_of(
      one_workflow({parallel({tool(2.5), tool(1.0), tool(1.0), tool(1.0)}, 2)}), poisson(1)));
  EXPECT_NEAR(chain.sessions.at(0).e2e_s(), 3.0, kEps);
  EXPECT_EQ(chain.sessions.at(0).path.tool_calls, 3);
}

// Retries count on the tool's time: a tool that always fails with 2 retries of 0.5 s after a
// first attempt of 1 s takes 2 s, and the session still completes (only LLM calls fail it).
TEST(AgentCriticalPath, RetriesAddTheirOwnLatency) {
  json t = tool(1.0);
  t["failure_probability"] = 1.0;
  t["retries"] = 2;
  t["retry_latency_s"] = 0.5;
  const auto run = run_agent(workload_of(one_workflow({t}), poisson(1)));
  const SessionRecord& r = run.sessions.at(0);
  EXPECT_TRUE(r.ok);
  EXPECT_NEAR(r.e2e_s(), 2.0, kEps);
  EXPECT_EQ(r.tool_attempts, 3);
  EXPECT_EQ(r.tool_failures, 1);
}

// The first token the user sees is the last LLM call's first token when it streams, its end
// when it does not.
TEST(AgentCriticalPath, UserFirstTokenIsTheLastCallsFirstToken) {
  json last = llm(10, 5);
  const auto streamed = run_agent(workload_of(one_workflow({tool(1.0), last}), poisson(1)));
  EXPECT_NEAR(streamed.sessions.at(0).ttft_s(), 1.0 + 0.1 + 0.2, kEps);
  last["stream"] = false;
  const auto whole = run_agent(workload_of(one_workflow({tool(1.0), last}), poisson(1)));
  EXPECT_NEAR(whole.sessions.at(0).ttft_s(), 2.0, kEps);
  const auto tools_only = run_agent(workload_of(one_workflow({tool(1.0)}), poisson(1)));
  EXPECT_TRUE(std::isnan(tools_only.sessions.at(0).ttft_s()));
}

// Closed-loop users: each runs its sessions back to back with a think time between them.
TEST(AgentCriticalPath, ClosedLoopUsersThinkBetweenSessions) {
  const json closed = {{"type", "closed"}, {"clients", 2}, {"think_time_s", 1.0}};
  const auto run = run_agent(workload_of(one_workflow({tool(2.0)}, 6), closed));
  ASSERT_EQ(run.sessions.size(), 6u);
  for (const SessionRecord& r : run.sessions) {
    // User u's k-th session starts at k * (2 + 1).
    EXPECT_NEAR(std::fmod(r.start_s, 3.0), 0.0, kEps) << r.id;
    EXPECT_LE(r.user, 1u);
  }
  EXPECT_NEAR(run.sessions.back().finish_s, 2 * 3.0 + 2.0, kEps);
}

// An LLM call the engine refuses ends the session as failed at that time; the session is
// counted apart and its other calls change nothing.
TEST(AgentCriticalPath, RejectedCallFailsTheSession) {
  agent_test::FakeEngine engine;
  engine.max_prompt_tokens = 100;
  const json steps = {llm(50, 10), tool(1.0, 60), llm(10, 5), tool(5.0)};
  const auto run = run_agent(workload_of(one_workflow(steps, 3), poisson(10)), engine);
  ASSERT_EQ(run.sessions.size(), 3u);
  for (const SessionRecord& r : run.sessions) {
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.cause, FailureCause::kTooLong);
    EXPECT_NEAR(r.e2e_s(), 1.0 + 1.0, kEps);  // the first call and the tool, then refused
  }
  EXPECT_EQ(run.summary.failed, 3u);
  EXPECT_EQ(run.summary.completed, 0u);
}

// Same seed, same sessions; another seed moves them.
TEST(AgentCriticalPath, Deterministic) {
  json t = {{"type", "tool"},
            {"latency_s", {{"type", "exponential"}, {"mean", 1.0}}},
            {"failure_probability", 0.3},
            {"retries", 1},
            {"result_tokens", {{"type", "uniform"}, {"min", 10}, {"max", 100}}}};
  json l = {{"type", "llm"},
            {"new_tokens", {{"type", "uniform"}, {"min", 10}, {"max", 50}}},
            {"output_tokens", {{"type", "uniform"}, {"min", 10}, {"max", 50}}}};
  const json steps = {l, parallel({t, t, t}, 2), l};
  auto csv = [&](uint64_t seed) {
    std::string all;
    for (const SessionRecord& r :
         run_agent(workload_of(one_workflow(steps, 50), poisson(2), seed)).sessions) {
      all += session_csv_line(r) + "\n";
    }
    return all;
  };
  EXPECT_EQ(csv(7), csv(7));
  EXPECT_NE(csv(7), csv(8));
}

}  // namespace
}  // namespace servesim
