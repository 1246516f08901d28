// Context policies keep token accounting exact, and the context is real token content: an
// agent call's prompt starts with the token ids its earlier calls read and generated.
#include <gtest/gtest.h>

#include <vector>

#include "sim/workload/request_prompt.h"
#include "sim/workload/synthetic_prompt.h"
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

constexpr int32_t kVocab = 32000;
constexpr int kSystem = 100;

std::vector<int32_t> prompt_of(const RequestSpec& spec) {
  std::vector<int32_t> tokens;
  request_prompt_into(spec, kVocab, tokens);
  return tokens;
}

// The prompt and the answer the fake engine "generated" (the simulator's Replica samples
// output position p of a request as synthetic_stream_token(session, p)).
std::vector<int32_t> prompt_and_answer(const RequestSpec& spec) {
  std::vector<int32_t> tokens = prompt_of(spec);
  append_stream_tokens(tokens, spec.session, spec.output_tokens, kVocab);
  return tokens;
}

std::vector<int32_t> slice(const std::vector<int32_t>& v, size_t from, size_t n) {
  return {v.begin() + static_cast<long>(from), v.begin() + static_cast<long>(from + n)};
}

agent_test::Run run_with(const json& steps, const json& context = json()) {
  json extra = {{"system_prompt_tokens", kSystem}};
  if (!context.is_null()) extra["context"] = context;
  return run_agent(workload_of(one_workflow(steps, 1, extra), poisson(1)));
}

TEST(AgentContext, KeepEverythingGrowsByEachCallAndToolResult) {
  const auto run = run_with({llm(10, 5), tool(1.0, 50), llm(20, 5)});
  ASSERT_EQ(run.calls.size(), 2u);
  EXPECT_EQ(run.calls[0].prompt_tokens, kSystem + 10);
  EXPECT_EQ(run.calls[1].prompt_tokens, kSystem + 15 + 50 + 20);
  EXPECT_EQ(run.calls[1].history_tokens, 15 + 50);
  EXPECT_EQ(run.sessions.at(0).input_tokens, 110 + 185);
  EXPECT_EQ(run.sessions.at(0).output_tokens, 10);
  // The second prompt starts with the first one's prompt and answer, token for token.
  const std::vector<int32_t> first = prompt_and_answer(run.calls[0]);
  const std::vector<int32_t> second = prompt_of(run.calls[1]);
  ASSERT_EQ(second.size(), 185u);
  EXPECT_EQ(slice(second, 0, first.size()), first);
  // Both start with the workflow's system prompt.
  EXPECT_EQ(run.calls[0].prefix_group, run.calls[1].prefix_group);
  EXPECT_EQ(run.calls[0].shared_prefix_tokens, kSystem);
}

TEST(AgentContext, TrimCutsEachToolResult) {
  const auto run = run_with({llm(10, 5), tool(1.0, 50), tool(1.0, 20), llm(20, 5)},
                            {{"max_tool_result_tokens", 30}});
  EXPECT_EQ(run.calls.at(1).prompt_tokens, kSystem + 15 + 30 + 20 + 20);
}

TEST(AgentContext, SummaryReplacesTheHistory) {
  const json policy = {
      {"summarize", {{"every_llm_calls", 1}, {"summary_tokens", 4}, {"prompt_tokens", 7}}}};
  const auto run = run_with({llm(10, 5), tool(1.0, 50), llm(20, 5)}, policy);
  ASSERT_EQ(run.calls.size(), 4u);  // call, summary, call, summary
  EXPECT_EQ(run.calls[0].prompt_tokens, kSystem + 10);
  EXPECT_EQ(run.calls[1].prompt_tokens, kSystem + 15 + 7);
  EXPECT_EQ(run.calls[1].output_tokens, 4);
  EXPECT_EQ(run.calls[2].prompt_tokens, kSystem + 4 + 50 + 20);
  EXPECT_EQ(run.calls[3].prompt_tokens, kSystem + 4 + 50 + 25 + 7);
  EXPECT_EQ(run.sessions.at(0).llm_calls, 4);
  // The history after a summary is the summary's own answer.
  const std::vector<int32_t> summary = prompt_and_answer(run.calls[1]);
  EXPECT_EQ(slice(prompt_of(run.calls[2]), kSystem, 4), slice(summary, kSystem + 15 + 7, 4));
}

TEST(AgentContext, SummaryEveryKCalls) {
  const json policy = {{"summarize", {{"every_llm_calls", 2}, {"summary_tokens", 10}}}};
  const auto run = run_with({llm(10, 5), llm(10, 5), llm(10, 5)}, policy);
  ASSERT_EQ(run.calls.size(), 4u);
  EXPECT_EQ(run.calls[2].prompt_tokens, kSystem + 30 + 1);  // the summary's one-token prompt
  EXPECT_EQ(run.calls[3].prompt_tokens, kSystem + 10 + 10);
}

TEST(AgentContext, SubtaskClearsToTheStartOfItsLastAnswer) {
  const json subtask = {
      {"type", "sequence"}, {"subtask", true}, {"steps", {llm(10, 8), tool(1.0, 50)}}};
  const auto run = run_with({llm(3, 2), subtask, llm(20, 5)}, {{"subtask_summary_tokens", 5}});
  ASSERT_EQ(run.calls.size(), 3u);
  EXPECT_EQ(run.calls[1].prompt_tokens, kSystem + 5 + 10);
  EXPECT_EQ(run.calls[2].prompt_tokens, kSystem + 5 + 5 + 20);
  const std::vector<int32_t> answer = prompt_and_answer(run.calls[1]);
  EXPECT_EQ(slice(prompt_of(run.calls[2]), kSystem + 5, 5), slice(answer, kSystem + 15, 5));
}

TEST(AgentContext, ParallelCallsShareTheContextNotTheirNewTokens) {
  const json group = {{"type", "parallel"}, {"steps", {llm(10, 5), llm(20, 5)}}};
  const auto run = run_with({llm(4, 4), group, llm(1, 1)});
  ASSERT_EQ(run.calls.size(), 4u);
  EXPECT_EQ(run.calls[1].prompt_tokens, kSystem + 8 + 10);
  EXPECT_EQ(run.calls[2].prompt_tokens, kSystem + 8 + 20);
  EXPECT_EQ(run.calls[3].prompt_tokens, kSystem + 8 + 15 + 25 + 1);
  const std::vector<int32_t> a = prompt_of(run.calls[1]);
  const std::vector<int32_t> b = prompt_of(run.calls[2]);
  EXPECT_EQ(slice(a, 0, kSystem + 8), slice(b, 0, kSystem + 8));
  EXPECT_NE(slice(a, kSystem + 8, 10), slice(b, kSystem + 8, 10));
  // The merged context holds both branches in order: the first is a prefix of the last call.
  EXPECT_EQ(slice(prompt_of(run.calls[3]), 0, kSystem + 8 + 15), prompt_and_answer(run.calls[1]));
}

// Without a context, the prompt is the two-segment one of every other workload.
TEST(AgentContext, EmptyContextKeepsTheTwoSegmentPrompt) {
  RequestSpec spec;
  spec.prefix_group = 3;
  spec.shared_prefix_tokens = 20;
  spec.session = 9;
  spec.prompt_tokens = 50;
  EXPECT_EQ(prompt_of(spec), synthetic_prompt(3, 20, 9, 30, kVocab));
}

}  // namespace
}  // namespace servesim
