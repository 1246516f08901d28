// Per-call spans (SessionRecord::spans): recorded only when the observer asks; one per LLM
// call, tool run and cache lookup in issue order, with times that agree with the record; the
// spans marked critical are the critical path's own calls, back to back from the session's
// start to its end, so their durations sum to the E2E.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "tests/sim/agent/agent_harness.h"

namespace servesim {
namespace {

using agent_test::FakeEngine;
using agent_test::llm;
using agent_test::one_workflow;
using agent_test::poisson;
using agent_test::run_agent;
using agent_test::tool;
using agent_test::workload_of;
using nlohmann::json;

constexpr double kEps = 1e-9;

json named(json step, const std::string& id) {
  step["id"] = id;
  return step;
}
json parallel(const json& steps) {
  return {{"type", "parallel"}, {"steps", steps}};
}
json sequence(const json& steps) {
  return {{"type", "sequence"}, {"steps", steps}};
}

agent_test::Run run_with_spans(const json& agent, const FakeEngine& engine = {}) {
  return run_agent(workload_of(agent, poisson(1)), engine, {{{"m", 0}}, {}}, true);
}

// The record's invariants for an ok session with spans (session_record.h).
void expect_consistent(const SessionRecord& r) {
  ASSERT_TRUE(r.ok);
  ASSERT_FALSE(r.spans.empty());
  std::vector<const SessionSpan*> critical;
  for (const SessionSpan& s : r.spans) {
    EXPECT_GE(s.start_s, r.start_s - kEps) << s.step;
    EXPECT_LE(s.end_s, r.finish_s + kEps) << s.step;
    EXPECT_LE(s.start_s, s.end_s) << s.step;
    if (s.critical) critical.push_back(&s);
  }
  ASSERT_FALSE(critical.empty());
  std::sort(critical.begin(), critical.end(),
            [](const SessionSpan* a, const SessionSpan* b) { return a->start_s < b->start_s; });
  EXPECT_NEAR(critical.front()->start_s, r.start_s, kEps);
  EXPECT_NEAR(critical.back()->end_s, r.finish_s, kEps);
  double sum_s = 0;
  for (size_t i = 0; i < critical.size(); ++i) {
    sum_s += critical[i]->duration_s();
    if (i > 0) {
      EXPECT_NEAR(critical[i]->start_s, critical[i - 1]->end_s, kEps) << i;
    }
  }
  EXPECT_NEAR(sum_s, r.e2e_s(), kEps);
  EXPECT_NEAR(sum_s, r.path.total_s(), kEps);
}

// llm "plan" (1 s) -> parallel [tool "slow" 2.5 | tool "fetch" 1 -> llm "read" (1 s) | tool
// "quick" 0.5] -> tool "final" 1: spans in issue order, the slow branch on the path.
TEST(AgentSpans, SequenceAndParallelGroupInIssueOrder) {
  const json steps = {named(llm(10, 5), "plan"),
                      parallel({named(tool(2.5), "slow"),
                                sequence({named(tool(1.0), "fetch"), named(llm(10, 5), "read")}),
                                named(tool(0.5), "quick")}),
                      named(tool(1.0), "final")};
  const auto run = run_with_spans(one_workflow(steps));
  ASSERT_EQ(run.sessions.size(), 1u);
  const SessionRecord& r = run.sessions[0];
  struct Expected {
    const char* step;
    SpanKind kind;
    double start_s;  // after the session's start
    double end_s;
    bool critical;
  };
  const Expected expected[] = {
      {"plan", SpanKind::kLlm, 0.0, 1.0, true},    {"slow", SpanKind::kTool, 1.0, 3.5, true},
      {"fetch", SpanKind::kTool, 1.0, 2.0, false}, {"quick", SpanKind::kTool, 1.0, 1.5, false},
      {"read", SpanKind::kLlm, 2.0, 3.0, false},   {"final", SpanKind::kTool, 3.5, 4.5, true}};
  ASSERT_EQ(r.spans.size(), std::size(expected));
  for (size_t i = 0; i < r.spans.size(); ++i) {
    const SessionSpan& s = r.spans[i];
    EXPECT_EQ(s.step, expected[i].step) << i;
    EXPECT_EQ(s.kind, expected[i].kind) << i;
    EXPECT_NEAR(s.start_s - r.start_s, expected[i].start_s, kEps) << i;
    EXPECT_NEAR(s.end_s - r.start_s, expected[i].end_s, kEps) << i;
    EXPECT_EQ(s.critical, expected[i].critical) << i;
    EXPECT_TRUE(s.ok) << i;
  }
  // The fake engine: 0.1 s queue, 0.2 s prefill, 0.7 s decode.
  const SessionSpan& plan = r.spans[0];
  EXPECT_NEAR(plan.scheduled_s, plan.start_s + 0.1, kEps);
  EXPECT_NEAR(plan.first_token_s, plan.start_s + 0.3, kEps);
  EXPECT_NEAR(plan.queue_s, 0.1, kEps);
  EXPECT_NEAR(plan.prefill_s, 0.2, kEps);
  EXPECT_NEAR(plan.decode_s, 0.7, kEps);
  EXPECT_TRUE(std::isnan(r.spans[1].scheduled_s));  // tools have no engine times
  expect_consistent(r);
}

// The branch that ends last changes with the tools' latencies; the marks follow it.
TEST(AgentSpans, CriticalMarksFollowTheBranchThatEndsLast) {
  const json steps = {named(llm(10, 5), "plan"),
                      parallel({named(tool(2.0), "slow"),
                                sequence({named(tool(1.5), "fetch"), named(llm(10, 5), "read")})}),
                      named(tool(1.0), "final")};
  const SessionRecord r = run_with_spans(one_workflow(steps)).sessions.at(0);
  std::vector<std::string> critical;
  for (const SessionSpan& s : r.spans) {
    if (s.critical) critical.push_back(s.step);
  }
  EXPECT_EQ(critical, (std::vector<std::string>{"plan", "fetch", "read", "final"}));
  expect_consistent(r);
}

// Many sessions of a limited parallel group, caches and context summaries: every session
// keeps the invariants, and the critical LLM spans' split is the path's.
TEST(AgentSpans, RecordsAgreeWithTheirPathsAcrossSessions) {
  json cached = tool(0.4);
  cached["cache"] = {{"ttl_s", 30}, {"keys", 3}, {"lookup_s", 0.01}};
  json summary_llm = llm(20, 10);
  summary_llm["cache"] = {{"exact_hit_probability", 0.3}, {"lookup_s", 0.02}};
  json limited = parallel({tool(1.0), sequence({cached, llm(5, 5)}), tool(0.2), llm(8, 3)});
  limited["max_concurrency"] = 2;
  const json steps = {llm(10, 5), limited, summary_llm, llm(10, 20)};
  const json context = {{"summarize", {{"every_llm_calls", 3}, {"summary_tokens", 20}}}};
  const auto run =
      run_with_spans(one_workflow(steps, 40, {{"context", context}}), FakeEngine{0.3, 0.2, 0.5});
  ASSERT_EQ(run.sessions.size(), 40u);
  int hits = 0;
  for (const SessionRecord& r : run.sessions) {
    expect_consistent(r);
    CriticalPath from_spans;
    for (const SessionSpan& s : r.spans) {
      hits += s.hit ? 1 : 0;
      if (s.critical && s.kind == SpanKind::kLlm) add_llm_call(s, from_spans);
    }
    EXPECT_NEAR(from_spans.llm_queue_s, r.path.llm_queue_s, kEps) << r.id;
    EXPECT_NEAR(from_spans.decode_s, r.path.decode_s, kEps) << r.id;
    EXPECT_EQ(from_spans.llm_calls, r.path.llm_calls) << r.id;
    EXPECT_EQ(
        static_cast<int>(r.spans.size()),
        r.llm_calls + r.tool_cache_lookups + r.llm_cache_lookups + r.tool_calls - r.tool_cache_hits)
        << r.id;
  }
  EXPECT_GT(hits, 0);
}

TEST(AgentSpans, NoneWithoutTheOption) {
  const json steps = {llm(10, 5), parallel({tool(2.5), tool(1.0)}), llm(10, 5)};
  const auto off = run_agent(workload_of(one_workflow(steps, 5), poisson(1)));
  const auto on = run_with_spans(one_workflow(steps, 5));
  ASSERT_EQ(off.sessions.size(), on.sessions.size());
  for (size_t i = 0; i < off.sessions.size(); ++i) {
    EXPECT_TRUE(off.sessions[i].spans.empty());
    EXPECT_EQ(off.sessions[i].path.last_span, -1);
    EXPECT_EQ(on.sessions[i].spans.size(), 4u);
    // Recording changes nothing the run computes.
    EXPECT_EQ(off.sessions[i].finish_s, on.sessions[i].finish_s);
    EXPECT_EQ(off.sessions[i].path.total_s(), on.sessions[i].path.total_s());
  }
}

// A rejected call ends the session: its span failed, nothing is marked critical.
TEST(AgentSpans, FailedSessionHasNoCriticalPath) {
  FakeEngine engine;
  engine.max_prompt_tokens = 100;
  const json steps = {llm(10, 5), tool(0.5, 500), llm(10, 5)};
  const SessionRecord r = run_with_spans(one_workflow(steps), engine).sessions.at(0);
  ASSERT_FALSE(r.ok);
  ASSERT_EQ(r.spans.size(), 3u);
  EXPECT_TRUE(r.spans[0].ok);
  EXPECT_FALSE(r.spans[2].ok);
  EXPECT_NEAR(r.spans[2].end_s, r.finish_s, kEps);
  for (const SessionSpan& s : r.spans) EXPECT_FALSE(s.critical) << s.step;
}

// A replayed trace: two tools at once, a call after both, a lookup; the slower tool is on
// the path, and the spans are named by call.
TEST(AgentSpans, ReplayedTraceMarksItsPath) {
  const std::string line =
      R"({"session": 0, "start_s": 5, "calls": [)"
      R"({"type": "tool", "wait_s": 1.0}, {"type": "tool", "wait_s": 2.0, "ok": false},)"
      R"({"type": "llm", "after": [0, 1], "input_tokens": 40, "output_tokens": 8},)"
      R"({"type": "lookup", "after": [2], "wait_s": 0.5, "hit": "exact"}]})";
  const auto path = std::filesystem::temp_directory_path() / "servesim_span_test.jsonl";
  std::ofstream(path) << line << "\n";
  const auto run = run_with_spans(json{{"sessions", 1}, {"trace", path.string()}});
  const SessionRecord& r = run.sessions.at(0);
  ASSERT_EQ(r.spans.size(), 4u);
  EXPECT_EQ(r.spans[1].step, "calls[1]");
  EXPECT_FALSE(r.spans[0].critical);
  EXPECT_TRUE(r.spans[1].critical);
  EXPECT_FALSE(r.spans[1].ok);
  EXPECT_TRUE(r.spans[2].critical);
  EXPECT_EQ(r.spans[3].kind, SpanKind::kLookup);
  EXPECT_TRUE(r.spans[3].hit);
  expect_consistent(r);
}

}  // namespace
}  // namespace servesim
