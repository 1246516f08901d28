// A stand-in for the simulator in the agent tests: it drives an AgentSource the way
// Simulation's driver does (advance_to, pop, on_request_left) against a fake engine whose
// every call takes fixed queue, prefill and decode times, so sessions can be checked against
// hand-computed schedules. Header-only test helper.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <queue>
#include <vector>

#include "sim/agent/agent_source.h"
#include "sim/agent/agent_spec.h"
#include "sim/core/observer.h"
#include "sim/workload/workload.h"

namespace servesim::agent_test {

struct FakeEngine {
  double queue_s = 0.1;
  double prefill_s = 0.2;
  double decode_s = 0.7;
  int max_prompt_tokens = 0;  // > 0: longer prompts are rejected (too long)
};

class Recorder final : public Observer {
 public:
  explicit Recorder(bool spans = false) : spans_(spans) {}
  void on_session_done(const SessionRecord& r) override { sessions.push_back(r); }
  bool wants_session_spans() override { return spans_; }
  std::vector<SessionRecord> sessions;

 private:
  bool spans_;
};

struct Run {
  std::vector<SessionRecord> sessions;
  std::vector<RequestSpec> calls;  // in pop order
  SessionSummary summary;
};

inline WorkloadSpec workload_of(const nlohmann::json& agent, const nlohmann::json& arrival,
                                uint64_t seed = 1) {
  nlohmann::json w = {{"arrival", arrival}, {"agent", agent}, {"seed", seed}};
  return WorkloadSpec::from_json(w, "", "workload");
}

// With `spans`, the sessions record their calls' spans (Observer::wants_session_spans).
inline Run run_agent(const WorkloadSpec& workload, const FakeEngine& engine = {},
                     const AgentLimits& limits = {{{"m", 0}}, {}}, bool spans = false) {
  const AgentSpec spec = AgentSpec::from_json(workload.agent, "workload.agent", "", limits);
  Recorder recorder(spans);
  AgentSource source(workload, spec, recorder);
  struct Done {
    double at_s;
    uint64_t seq;
    RequestSpec spec;
  };
  auto later = [](const Done& a, const Done& b) {
    return a.at_s > b.at_s || (a.at_s == b.at_s && a.seq > b.seq);
  };
  std::priority_queue<Done, std::vector<Done>, decltype(later)> done(later);
  Run run;
  uint64_t seq = 0;
  for (int guard = 0; guard < 10'000'000; ++guard) {
    const std::optional<double> next = source.next_arrival_s();
    if (!done.empty() && (!next || done.top().at_s <= *next)) {
      const Done d = done.top();
      done.pop();
      RequestRecord r;
      r.id = d.spec.id;
      r.arrival_s = d.spec.arrival_s;
      r.prompt_tokens = d.spec.prompt_tokens;
      if (engine.max_prompt_tokens > 0 && d.spec.prompt_tokens > engine.max_prompt_tokens) {
        r.status = RequestOutcome::kRejected;
        r.cause = FailureCause::kTooLong;
      } else {
        r.output_tokens = d.spec.output_tokens;
        r.first_scheduled_s = r.arrival_s + engine.queue_s;
        r.first_token_s = r.first_scheduled_s + engine.prefill_s;
        r.finish_s = r.first_token_s + engine.decode_s;
        r.segments.engine_queue_s = engine.queue_s;
        r.segments.prefill_s = engine.prefill_s;
        r.segments.decode_s = engine.decode_s;
      }
      source.on_request_left(d.spec, r, d.at_s);
      continue;
    }
    if (!next) break;
    source.advance_to(*next);
    while (source.next_arrival_s() && *source.next_arrival_s() <= *next) {
      RequestSpec spec = source.pop();
      run.calls.push_back(spec);
      const bool rejected =
          engine.max_prompt_tokens > 0 && spec.prompt_tokens > engine.max_prompt_tokens;
      const double took = rejected ? 0.0 : engine.queue_s + engine.prefill_s + engine.decode_s;
      done.push({spec.arrival_s + took, seq++, spec});
    }
  }
  EXPECT_TRUE(source.finished());
  run.sessions = recorder.sessions;
  run.summary = source.metrics().summary();
  return run;
}

// One workflow named "w" with these steps and extra keys (context, system_prompt_tokens).
inline nlohmann::json one_workflow(const nlohmann::json& steps, int sessions = 1,
                                   const nlohmann::json& extra = nlohmann::json::object()) {
  // A lone step ({step} in a call reads as the step itself) is a one-step workflow.
  const nlohmann::json list = steps.is_object() ? nlohmann::json::array({steps}) : steps;
  nlohmann::json w = {{"name", "w"}, {"steps", list}};
  for (auto it = extra.begin(); it != extra.end(); ++it) w[it.key()] = it.value();
  return {{"sessions", sessions}, {"workflows", nlohmann::json::array({w})}};
}

inline nlohmann::json poisson(double rate) {
  return {{"type", "poisson"}, {"rate_qps", rate}};
}

inline nlohmann::json tool(double latency_s, int result_tokens = 10) {
  return {{"type", "tool"}, {"latency_s", latency_s}, {"result_tokens", result_tokens}};
}

inline nlohmann::json llm(int new_tokens, int output_tokens) {
  return {{"type", "llm"}, {"new_tokens", new_tokens}, {"output_tokens", output_tokens}};
}

}  // namespace servesim::agent_test
