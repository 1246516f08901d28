// Stepped session arrivals: a stepped schedule of users ([1, 3, 0, 2] users, 20 s a step),
// each running one session after another while its step counts it; a session in progress
// when its user's step ends runs to its end. The LLM calls are reported per step (the step
// they were sent in), as a stepped load test's requests are.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "models/catalog.h"
#include "sim/core/observer.h"
#include "sim/core/session_record.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

nlohmann::json stepped_users() {
  return nlohmann::json::parse(R"({
    "model": "Llama-2-7B", "gpu": "A100-80GB", "engine": {"max_model_len": 4096},
    "workload": {
      "arrival": {"type": "stepped", "steps": [1, 3, 0, 2], "step_duration_s": 20,
                  "think_time_s": 0.5},
      "agent": {"workflows": [
        {"name": "w", "steps": [
          {"type": "llm", "new_tokens": 200, "output_tokens": 40},
          {"type": "tool", "latency_s": 1.0, "result_tokens": 20},
          {"type": "llm", "new_tokens": 50, "output_tokens": 40}]}]}},
    "seed": 4})");
}

class Sessions final : public Observer {
 public:
  void on_session_done(const SessionRecord& r) override { all.push_back(r); }
  std::vector<SessionRecord> all;
};

TEST(AgentStepped, UsersStartSessionsOnlyWhileTheirStepCountsThem) {
  Simulation sim(parse_scenario(stepped_users(), "", "test", Catalog()).config);
  Sessions sessions;
  const SimulationResult result = sim.run(sessions);
  ASSERT_FALSE(sessions.all.empty());
  std::set<uint32_t> users_by_step[4];
  for (const SessionRecord& s : sessions.all) {
    EXPECT_TRUE(s.ok) << s.id;
    const int step = static_cast<int>(s.start_s / 20.0);
    ASSERT_LT(step, 4) << s.start_s;  // nothing starts after the schedule's 80 s
    users_by_step[step].insert(s.user);
  }
  EXPECT_EQ(users_by_step[0], (std::set<uint32_t>{0}));
  EXPECT_EQ(users_by_step[1], (std::set<uint32_t>{0, 1, 2}));
  EXPECT_TRUE(users_by_step[2].empty());
  EXPECT_EQ(users_by_step[3], (std::set<uint32_t>{0, 1}));
  // Each user's sessions follow one another, a think time apart.
  for (uint32_t u = 0; u < 3; ++u) {
    double last_finish = -1;
    for (const SessionRecord& s : sessions.all) {
      if (s.user != u) continue;
      if (last_finish >= 0 && s.start_s < 40.0) {
        EXPECT_GE(s.start_s, last_finish + 0.5 - 1e-9);
      }
      last_finish = s.finish_s;
    }
  }
  // The calls per step: three users' worth in step 1, none sent in step 2 but those of
  // sessions that began before it.
  ASSERT_EQ(result.by_step.size(), 4u);
  EXPECT_GT(result.by_step[0].completed, 0u);
  EXPECT_GT(result.by_step[1].completed, 2 * result.by_step[0].completed);
  EXPECT_LE(result.by_step[2].requests, 3u);
  EXPECT_GT(result.by_step[3].completed, 0u);
  uint64_t calls = 0;
  for (const MetricsSummary& s : result.by_step) calls += s.requests;
  EXPECT_EQ(calls, result.summary.requests);
}

TEST(AgentStepped, TheSameSeedGivesTheSameRun) {
  Sessions a, b;
  Simulation one(parse_scenario(stepped_users(), "", "test", Catalog()).config);
  Simulation two(parse_scenario(stepped_users(), "", "test", Catalog()).config);
  EXPECT_EQ(one.run(a).fingerprint, two.run(b).fingerprint);
  EXPECT_EQ(a.all.size(), b.all.size());
}

}  // namespace
}  // namespace servesim
