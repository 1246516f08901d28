// The JSONL session trace: lines round-trip, a simulated run's trace replays against the same
// deployment into the same sessions (calls, tokens, prefix-cache hits, times), dependencies
// and tool waits are honoured as recorded, and bad lines are one-line errors with file:line.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "models/catalog.h"
#include "models/config_error.h"
#include "sim/agent/agent_workload.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"
#include "tests/sim/agent/agent_harness.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;
using agent_test::run_agent;
using agent_test::workload_of;
using nlohmann::json;

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

class Sessions final : public Observer {
 public:
  void on_session_done(const SessionRecord& r) override { records.push_back(r); }
  std::vector<SessionRecord> records;
};

std::string temp_file(const std::string& name, const std::string& text) {
  const fs::path p = fs::temp_directory_path() / ("servesim_trace_test_" + name);
  std::ofstream(p) << text;
  return p.string();
}

// A planner, three searches at most two at once, a reader per search, a tests tool, a review
// only when it failed, and a summary every four calls: every kind of dependency a trace keeps.
json workflow() {
  auto llm = [](int n, int out) {
    return json{{"type", "llm"}, {"new_tokens", n}, {"output_tokens", out}};
  };
  auto search = json{{"type", "tool"},
                     {"latency_s", {{"type", "exponential"}, {"mean", 0.5}}},
                     {"result_tokens", {{"type", "uniform"}, {"min", 100}, {"max", 300}}}};
  const json sub = {{"type", "sequence"}, {"steps", {search, llm(40, 30)}}};
  const json tests = {{"type", "tool"},
                      {"id", "tests"},
                      {"latency_s", 1.0},
                      {"failure_probability", 0.5},
                      {"result_tokens", 50}};
  const json review = {{"type", "branch"}, {"if_failed", "tests"}, {"then", {llm(20, 40)}}};
  return {{"name", "agent"},
          {"system_prompt_tokens", 300},
          {"context", {{"summarize", {{"every_llm_calls", 4}, {"summary_tokens", 60}}}}},
          {"steps",
           {llm(100, 50),
            {{"type", "parallel"}, {"max_concurrency", 2}, {"steps", {sub, sub, sub}}},
            tests,
            review}}};
}

json scenario(const json& agent) {
  return {{"model", "Llama-2-7B"},
          {"gpu", "A100-80GB"},
          {"engine", {{"max_model_len", 4096}}},
          {"workload", {{"arrival", {{"type", "poisson"}, {"rate_qps", 1}}}, {"agent", agent}}},
          {"seed", 5}};
}

std::vector<SessionRecord> simulate(const json& j) {
  Simulation sim(parse_scenario(j, "", "test", Catalog()).config);
  Sessions observer;
  sim.run(observer);
  return observer.records;
}

TEST(SessionTrace, LineRoundTrips) {
  TracedSession s;
  s.session = 7;
  s.workflow = "w";
  s.user = 3;
  s.start_s = 1.25;
  TraceCall llm;
  llm.input_tokens = 40;
  llm.output_tokens = 20;
  llm.stream = false;
  llm.prompt_blocks = {0, 1};
  llm.output_blocks = {2};
  TraceCall tool;
  tool.kind = TraceCallKind::kTool;
  tool.after = {0};
  tool.wait_s = 0.75;
  tool.attempts = 2;
  tool.ok = false;
  tool.cached = true;
  tool.lookup_s = 0.25;
  TraceCall lookup;
  lookup.kind = TraceCallKind::kLookup;
  lookup.after = {0, 1};
  lookup.wait_s = 0.01;
  lookup.hit = "semantic";
  s.calls = {llm, tool, lookup};
  const TracedSession back = parse_session_trace_line(session_trace_line(s), "x:1");
  EXPECT_EQ(session_trace_line(back), session_trace_line(s));
  EXPECT_EQ(back.calls[1].after, std::vector<int>{0});
  EXPECT_EQ(back.calls[0].prompt_blocks, (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(back.calls[2].hit, "semantic");
  EXPECT_DOUBLE_EQ(back.calls[1].lookup_s, 0.25);
}

// Record a run, replay its trace on the same deployment: the same sessions.
TEST(SessionTrace, RecordedRunReplaysIntoTheSameSessions) {
  json agent = {{"sessions", 30}, {"record_trace", true}, {"workflows", {workflow()}}};
  const std::vector<SessionRecord> recorded = simulate(scenario(agent));
  ASSERT_EQ(recorded.size(), 30u);
  const std::vector<SessionRecord> again = simulate(scenario(agent));  // deterministic
  for (size_t i = 0; i < recorded.size(); ++i) {
    EXPECT_EQ(again[i].trace_json, recorded[i].trace_json);
  }
  std::string lines;
  for (const SessionRecord& r : recorded) {
    ASSERT_FALSE(r.trace_json.empty());
    lines += r.trace_json + "\n";
  }
  const std::string path = temp_file("roundtrip.jsonl", lines);
  const std::vector<SessionRecord> replayed =
      simulate(scenario(json{{"sessions", 30}, {"trace", path}}));
  ASSERT_EQ(replayed.size(), recorded.size());
  auto by_id = [](std::vector<SessionRecord> v) {
    std::sort(v.begin(), v.end(),
              [](const SessionRecord& a, const SessionRecord& b) { return a.start_s < b.start_s; });
    return v;
  };
  const auto a = by_id(recorded);
  const auto b = by_id(replayed);
  int64_t cached = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(b[i].workflow, a[i].workflow);
    EXPECT_EQ(b[i].ok, a[i].ok);
    EXPECT_EQ(b[i].llm_calls, a[i].llm_calls);
    EXPECT_EQ(b[i].tool_calls, a[i].tool_calls);
    EXPECT_EQ(b[i].tool_attempts, a[i].tool_attempts);
    EXPECT_EQ(b[i].tool_failures, a[i].tool_failures);
    EXPECT_EQ(b[i].input_tokens, a[i].input_tokens);
    EXPECT_EQ(b[i].output_tokens, a[i].output_tokens);
    EXPECT_EQ(b[i].cached_tokens, a[i].cached_tokens);
    EXPECT_DOUBLE_EQ(b[i].start_s, a[i].start_s);
    EXPECT_NEAR(b[i].finish_s, a[i].finish_s, 1e-6);
    EXPECT_NEAR(b[i].path.total_s(), b[i].e2e_s(), 1e-6);
    EXPECT_NEAR(b[i].path.tool_s, a[i].path.tool_s, 1e-6);
    EXPECT_EQ(b[i].path.llm_calls, a[i].path.llm_calls);
    cached += a[i].cached_tokens;
  }
  EXPECT_GT(cached, 0);  // the prefix cache took part, and the replay reproduced it
}

// Two tools at once (1 s and 2 s), then a call waiting for both: it starts at 2 s.
TEST(SessionTrace, DependenciesAndWaitsAreHonoured) {
  const std::string line =
      R"({"session": 0, "start_s": 5, "calls": [)"
      R"({"type": "tool", "wait_s": 1.0}, {"type": "tool", "wait_s": 2.0, "ok": false},)"
      R"({"type": "llm", "after": [0, 1], "input_tokens": 40, "output_tokens": 8},)"
      R"({"type": "lookup", "after": [2], "wait_s": 0.5, "hit": "exact"}]})";
  const std::string path = temp_file("deps.jsonl", line + "\n");
  const auto run =
      run_agent(workload_of(json{{"sessions", 1}, {"trace", path}}, agent_test::poisson(1)));
  ASSERT_EQ(run.sessions.size(), 1u);
  const SessionRecord& r = run.sessions[0];
  EXPECT_DOUBLE_EQ(r.start_s, 5.0);
  ASSERT_EQ(run.calls.size(), 1u);
  EXPECT_DOUBLE_EQ(run.calls[0].arrival_s, 7.0);
  EXPECT_NEAR(r.e2e_s(), 2.0 + 1.0 + 0.5, 1e-9);  // the fake engine takes 1 s a call
  EXPECT_NEAR(r.path.tool_s, 2.0, 1e-9);          // the slower tool is on the path
  EXPECT_NEAR(r.path.cache_s, 0.5, 1e-9);
  EXPECT_NEAR(r.path.total_s(), r.e2e_s(), 1e-9);
  EXPECT_EQ(r.tool_calls, 2);
  EXPECT_EQ(r.tool_failures, 1);
  EXPECT_EQ(r.llm_exact_hits, 1);
}

// Calls naming the same block ids re-send the same tokens: the second call's context is the
// first call's stream.
TEST(SessionTrace, SharedBlocksReSendTheSameTokens) {
  const std::string line =
      R"({"session": 0, "start_s": 0, "calls": [)"
      R"({"type": "llm", "input_tokens": 40, "output_tokens": 10, "prompt_blocks": [7, 8],)"
      R"( "output_blocks": [9]},)"
      R"({"type": "llm", "after": [0], "input_tokens": 70, "output_tokens": 5,)"
      R"( "prompt_blocks": [7, 8, 9, 11]}]})";
  const std::string path = temp_file("blocks.jsonl", line + "\n");
  const auto run =
      run_agent(workload_of(json{{"sessions", 1}, {"trace", path}}, agent_test::poisson(1)));
  ASSERT_EQ(run.calls.size(), 2u);
  const RequestSpec& first = run.calls[0];
  const RequestSpec& second = run.calls[1];
  ASSERT_EQ(second.context.size(), 2u);
  EXPECT_EQ(second.context[0].stream, first.session);  // blocks 7, 8, 9: the first call's
  EXPECT_EQ(second.context[0].offset, 0u);
  EXPECT_EQ(second.context[0].tokens, 48);
  EXPECT_EQ(second.context[1].stream, second.session);  // block 11: new, its own stream
  EXPECT_EQ(second.context[1].offset, 48u);
  EXPECT_EQ(second.prompt_tokens, 70);
}

std::string trace_error(const std::string& lines, const json& extra = json::object()) {
  const std::string path = temp_file("bad.jsonl", lines);
  json agent = {{"trace", path}};
  agent.update(extra);
  try {
    AgentSpec::from_json(agent, "workload.agent", "", {{{"m", 0}}, {}});
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return what;
  }
  return "no error";
}

TEST(SessionTrace, BadLinesNameFileAndLine) {
  const std::string ok = R"({"session": 0, "calls": [{"type": "tool", "wait_s": 1}]})";
  EXPECT_EQ(trace_error(ok + "\n"), "no error");
  EXPECT_HAS(trace_error(ok + "\n{oops\n"), "bad.jsonl:2: not a JSON object");
  // A number beyond a double is nlohmann's out_of_range, not a parse error (the fuzzer's find).
  EXPECT_HAS(trace_error(R"({"session": 0, "start_s": 1e999, "calls": []})"),
             "bad.jsonl:1: not a JSON object");
  EXPECT_HAS(trace_error(ok + "\n\n" + R"({"session": 1, "calls": []})"),
             "bad.jsonl:3: calls must be a non-empty array");
  EXPECT_HAS(trace_error(R"({"session": 0, "calls": [{"type": "tool", "after": [0]}]})"),
             "bad.jsonl:1: calls[0]: after must name earlier calls");
  EXPECT_HAS(trace_error(R"({"session": 0, "calls": [{"type": "tool", "wait_s": -1}]})"),
             "wait_s must be a finite number of seconds >= 0");
  EXPECT_HAS(trace_error(R"({"session": 0, "calls": [{"type": "think"}]})"),
             "type must be llm, tool or lookup");
  EXPECT_HAS(trace_error(R"({"session": 0, "calls": [{"type": "tool", "wiat_s": 1}]})"),
             "unknown key 'wiat_s'");
  EXPECT_HAS(trace_error(R"({"session": 0, "calls": [{"type": "llm", "input_tokens": 20,)"
                         R"( "output_tokens": 1, "prompt_blocks": [1, 2]}]})"),
             "prompt_blocks has 2 blocks, more than its tokens fill");
  EXPECT_HAS(trace_error(R"({"session": 0, "calls": [{"type": "llm", "input_tokens": 20,)"
                         R"( "output_tokens": 1, "prompt_blocks": [-3]}]})"),
             "non-negative integer block ids");
  EXPECT_HAS(trace_error(R"({"session": 0, "calls": [{"type": "lookup", "hit": "maybe"}]})"),
             "hit must be exact, semantic or miss");
  EXPECT_HAS(trace_error(R"({"session": 0, "calls": [{"type": "tool", "lookup_s": 1,)"
                         R"( "wait_s": 2}]})"),
             "cached must be true");
  EXPECT_HAS(trace_error(""), "the session trace has no sessions");
  EXPECT_HAS(trace_error(ok, json{{"sessions", 2}}), "sessions is 2 but the trace holds 1");
  EXPECT_HAS(trace_error(ok, json{{"trace_start", "now"}}), "trace_start must be");
  EXPECT_HAS(trace_error(ok, json{{"workflows", json::array()}}), "workflows is not allowed");
  EXPECT_HAS(trace_error(ok, json{{"record_trace", true}}), "record_trace is not supported");
  try {
    AgentSpec::from_json(json{{"trace", "/nonexistent/t.jsonl"}}, "workload.agent", "",
                         {{{"m", 0}}, {}});
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_HAS(std::string(e.what()), "/nonexistent/t.jsonl: cannot open the session trace");
  }
}

TEST(SessionTrace, RecordedStartsNeedAnOpenLoop) {
  const std::string path =
      temp_file("closed.jsonl", R"({"session": 0, "calls": [{"type": "tool", "wait_s": 1}]})");
  json closed = {{"type", "closed"}, {"clients", 2}};
  const WorkloadSpec w = workload_of(json{{"sessions", 1}, {"trace", path}}, closed);
  EXPECT_THROW(parse_agent_workload(w, {{{"m", 0}}, {}}), ConfigError);
  const WorkloadSpec by_arrival =
      workload_of(json{{"sessions", 1}, {"trace", path}, {"trace_start", "arrival"}}, closed);
  EXPECT_NO_THROW(parse_agent_workload(by_arrival, {{{"m", 0}}, {}}));
}

}  // namespace
}  // namespace servesim
