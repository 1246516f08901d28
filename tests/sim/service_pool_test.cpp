// Client-side connection pools (service.pools): a tenant's requests hold one of its pool's
// connections from their send to their answer's end, never more at once than the pool has;
// the others wait, in their timeout; private pools add up while a shared one is a global limit;
// a waiter that times out never reaches the server; an agent workflow's "tenant" puts its
// calls in that tenant (and pool); the pool's station row; determinism and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "sim/core/observer.h"
#include "sim/core/session_record.h"
#include "tests/sim/service_test_run.h"

namespace servesim {
namespace {

using testing::config_of;
using testing::expect_one_line_error;
using testing::Records;
using testing::run;

constexpr double kOneWayS = 0.005;  // half the scenarios' fixed 10 ms round trip

nlohmann::json scenario_with(const nlohmann::json& pools, const nlohmann::json& tenants,
                             double rate_qps = 40, int requests = 400) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "model": "Llama-2-7B", "gpu": "A100-80GB", "engine": {"max_model_len": 4096},
    "workload": {"arrival": {"type": "poisson", "rate_qps": 40}, "prompt_tokens": 256,
                 "output_tokens": 128, "num_requests": 400},
    "service": {"network": {"rtt_s": 0.01}},
    "seed": 5})");
  j["workload"]["arrival"]["rate_qps"] = rate_qps;
  j["workload"]["num_requests"] = requests;
  j["service"]["pools"] = pools;
  j["service"]["tenants"] = tenants;
  return j;
}

// Attempts holding a connection at once, from its grant (the send plus its pool wait) to the
// answer's last token; `tenants` picks the tenants counted (empty: all).
int peak_connections(const std::vector<RequestRecord>& records, std::vector<uint32_t> tenants) {
  std::vector<std::pair<double, int>> events;
  for (const RequestRecord& r : records) {
    if (r.status != RequestOutcome::kOk) continue;
    if (!tenants.empty() && std::find(tenants.begin(), tenants.end(), r.tenant) == tenants.end()) {
      continue;
    }
    events.push_back({r.arrival_s + r.segments.retry_s + r.segments.pool_s + 1e-9, +1});
    events.push_back({r.finish_s, -1});
  }
  std::sort(events.begin(), events.end());
  int now = 0, peak = 0;
  for (const auto& [t, d] : events) peak = std::max(peak, now += d);
  return peak;
}

const StationStats* row(const SimulationResult& r, const std::string& name) {
  for (const StationStats& s : r.stations) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

TEST(ConnectionPoolPath, APoolCapsTheAttemptsInFlightAndTheRestWait) {
  const nlohmann::json pools = nlohmann::json::parse(R"([{"name": "p", "connections": 4}])");
  const nlohmann::json tenants =
      nlohmann::json::parse(R"([{"name": "a", "share": 1, "pool": "p"}])");
  Records records;
  const SimulationResult r = run(config_of(scenario_with(pools, tenants)), &records);
  ASSERT_EQ(records.all.size(), 400u);
  EXPECT_EQ(r.summary.completed, 400u);
  EXPECT_EQ(peak_connections(records.all, {}), 4);
  const auto waited = std::count_if(records.all.begin(), records.all.end(), [](const auto& rec) {
    return rec.segments.pool_s > 1e-3 && rec.segments.network_s == kOneWayS;
  });
  EXPECT_GT(waited, 100);  // 40 req/s of ~1.5 s answers against 4 connections: most wait
  const StationStats* p = row(r, "pool p");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->workers, 4);
  EXPECT_EQ(p->jobs, 400u);
  EXPECT_GT(p->utilisation, 0.9);
  EXPECT_GT(p->max_queue, 10u);
  EXPECT_GT(p->mean_wait_s, 0.1);
}

TEST(ConnectionPoolPath, PrivatePoolsAddUpWhileASharedPoolIsAGlobalLimit) {
  const nlohmann::json two_private = nlohmann::json::parse(R"([
    {"name": "a", "connections": 3}, {"name": "b", "connections": 3}])");
  const nlohmann::json private_tenants = nlohmann::json::parse(R"([
    {"name": "x", "share": 0.5, "pool": "a"}, {"name": "y", "share": 0.5, "pool": "b"}])");
  Records priv;
  run(config_of(scenario_with(two_private, private_tenants)), &priv);
  EXPECT_EQ(peak_connections(priv.all, {0}), 3);
  EXPECT_EQ(peak_connections(priv.all, {1}), 3);
  EXPECT_GT(peak_connections(priv.all, {}), 3);

  const nlohmann::json shared = nlohmann::json::parse(R"([{"name": "s", "connections": 3}])");
  const nlohmann::json shared_tenants = nlohmann::json::parse(R"([
    {"name": "x", "share": 0.5, "pool": "s"}, {"name": "y", "share": 0.5, "pool": "s"}])");
  Records one;
  run(config_of(scenario_with(shared, shared_tenants)), &one);
  EXPECT_EQ(peak_connections(one.all, {}), 3);
}

TEST(ConnectionPoolPath, ATenantWithoutAPoolIsNotLimited) {
  const nlohmann::json pools = nlohmann::json::parse(R"([{"name": "p", "connections": 2}])");
  const nlohmann::json tenants = nlohmann::json::parse(R"([
    {"name": "pooled", "share": 0.5, "pool": "p"}, {"name": "free", "share": 0.5}])");
  Records records;
  run(config_of(scenario_with(pools, tenants)), &records);
  EXPECT_EQ(peak_connections(records.all, {0}), 2);
  EXPECT_GT(peak_connections(records.all, {1}), 8);
}

// One connection against 40 req/s of ~1 s answers: the queue for it outgrows the timeout,
// so nearly every attempt times out (most while they wait, the rest once they have the
// connection with too little time left) — the collapse a FIFO pool with timeouts has.
TEST(ConnectionPoolPath, WaitingCountsInTheTimeoutAndRetriesQueueAgain) {
  nlohmann::json j = scenario_with(nlohmann::json::parse(R"([{"name": "p", "connections": 1}])"),
                                   nlohmann::json::parse(R"([{"name": "a", "share": 1,
                                                              "pool": "p"}])"),
                                   40, 200);
  j["service"]["client"] = nlohmann::json::parse(R"({"timeout_s": 2,
      "retry": {"max_attempts": 2, "on": ["timed_out"], "initial_backoff_s": 0.1}})");
  Records records;
  const SimulationResult r = run(config_of(j), &records);
  ASSERT_EQ(records.all.size(), 200u);
  EXPECT_EQ(r.summary.completed + r.summary.timed_out, 200u);
  EXPECT_GT(r.summary.timed_out, 150u);
  EXPECT_GE(r.summary.completed, 1u);
  const auto retried = std::count_if(records.all.begin(), records.all.end(),
                                     [](const RequestRecord& rec) { return rec.attempts == 2; });
  EXPECT_GT(retried, 150);
  EXPECT_EQ(peak_connections(records.all, {}), 1);
  const StationStats* pool = row(r, "pool p");
  ASSERT_NE(pool, nullptr);
  EXPECT_GT(pool->mean_wait_s, 1.0);
  EXPECT_LE(pool->jobs, 200u + static_cast<uint64_t>(retried));
}

TEST(ConnectionPoolPath, AWaiterGivesUpAfterThePoolsWaitTimeout) {
  nlohmann::json j = scenario_with(
      nlohmann::json::parse(R"([{"name": "p", "connections": 2, "wait_timeout_s": 0.5}])"),
      nlohmann::json::parse(R"([{"name": "a", "share": 1, "pool": "p"}])"), 40, 200);
  Records records;
  const SimulationResult r = run(config_of(j), &records);
  EXPECT_EQ(r.summary.completed + r.summary.timed_out, 200u);
  EXPECT_GT(r.summary.timed_out, 100u);
  EXPECT_GE(r.summary.completed, 8u);  // 2 connections x 5 s of ~1 s answers
  double longest_wait_s = 0;
  for (const RequestRecord& rec : records.all) {
    if (rec.status == RequestOutcome::kOk) {
      longest_wait_s = std::max(longest_wait_s, rec.segments.pool_s);
    } else {
      EXPECT_EQ(rec.cause, FailureCause::kTimedOut);
    }
  }
  EXPECT_GT(longest_wait_s, 0.1);
  EXPECT_LE(longest_wait_s, 0.5);
}

TEST(ConnectionPoolPath, RunsAreDeterministic) {
  const nlohmann::json j =
      scenario_with(nlohmann::json::parse(R"([{"name": "p", "connections": 3}])"),
                    nlohmann::json::parse(R"([{"name": "a", "share": 1, "pool": "p"}])"));
  Records a, b;
  run(config_of(j), &a);
  run(config_of(j), &b);
  ASSERT_EQ(a.all.size(), b.all.size());
  for (size_t i = 0; i < a.all.size(); ++i) {
    EXPECT_EQ(a.all[i].finish_s, b.all[i].finish_s);
    EXPECT_EQ(a.all[i].segments.pool_s, b.all[i].segments.pool_s);
  }
}

TEST(ConnectionPoolPath, BadPoolsAreOneLineErrors) {
  const auto parse = [](const nlohmann::json& pools, const nlohmann::json& tenants) {
    return [=] { config_of(scenario_with(pools, tenants)); };
  };
  const nlohmann::json p = nlohmann::json::parse(R"([{"name": "shared", "connections": 4}])");
  expect_one_line_error(
      parse(p, nlohmann::json::parse(R"([{"name": "a", "share": 1, "pool": "shard"}])")),
      "service.tenants[0].pool: \"shard\" is not in service.pools (did you mean 'shared'?)");
  expect_one_line_error(parse(p, nlohmann::json::parse(R"([{"name": "a", "share": 1}])")),
                        "service.pools[0]: no tenant names pool \"shared\"");
  expect_one_line_error(parse(nlohmann::json::parse(R"([{"name": "s", "connections": 0}])"),
                              nlohmann::json::parse(R"([{"name": "a", "share": 1, "pool": "s"}])")),
                        "service.pools[0]: connections must be > 0");
  expect_one_line_error(parse(nlohmann::json::parse(R"([{"name": "s", "connections": 1},
                                      {"name": "s", "connections": 2}])"),
                              nlohmann::json::parse(R"([{"name": "a", "share": 1, "pool": "s"}])")),
                        "service.pools[1]: name \"s\" is used by an earlier pool");
  expect_one_line_error(parse(nlohmann::json::parse(R"({"name": "s"})"),
                              nlohmann::json::parse(R"([{"name": "a", "share": 1}])")),
                        "service.pools: must be a non-empty list");
  expect_one_line_error(
      parse(nlohmann::json::parse(R"([{"name": "s", "connections": 2, "wait_timeout_s": -1}])"),
            nlohmann::json::parse(R"([{"name": "a", "share": 1, "pool": "s"}])")),
      "service.pools[0]: wait_timeout_s must be a finite number >= 0");
  expect_one_line_error(
      parse(nlohmann::json::parse(R"([{"name": "s", "connections": 2, "size": 3}])"),
            nlohmann::json::parse(R"([{"name": "a", "share": 1, "pool": "s"}])")),
      "size");
  nlohmann::json no_tenants = scenario_with(p, nullptr);
  no_tenants["service"].erase("tenants");
  expect_one_line_error([&] { config_of(no_tenants); },
                        "service.pools[0]: no tenant names pool \"shared\"");
}

// An agent workload of two workflows, each naming a tenant: "one" makes one LLM call a
// session, "two" makes two.
nlohmann::json agent_scenario(const std::string& tenant_one, const std::string& tenant_two) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "model": "Llama-2-7B", "gpu": "A100-80GB", "engine": {"max_model_len": 4096},
    "workload": {"arrival": {"type": "poisson", "rate_qps": 2},
      "agent": {"sessions": 120, "workflows": [
        {"name": "one", "weight": 1, "steps": [
          {"type": "llm", "new_tokens": 100, "output_tokens": 20}]},
        {"name": "two", "weight": 1, "steps": [
          {"type": "llm", "new_tokens": 100, "output_tokens": 20},
          {"type": "llm", "new_tokens": 50, "output_tokens": 20}]}]}},
    "service": {"network": {"rtt_s": 0.01},
                "pools": [{"name": "p", "connections": 2}],
                "tenants": [{"name": "planner", "share": 0.5, "pool": "p"},
                            {"name": "coder", "share": 0.5}]},
    "seed": 3})");
  j["workload"]["agent"]["workflows"][0]["tenant"] = tenant_one;
  j["workload"]["agent"]["workflows"][1]["tenant"] = tenant_two;
  return j;
}

class SessionCalls final : public Observer {
 public:
  void on_request_done(const RequestRecord& r) override { ++by_tenant[r.tenant]; }
  void on_session_done(const SessionRecord& s) override { by_workflow[s.workflow] += s.llm_calls; }
  std::map<uint32_t, int> by_tenant;
  std::map<std::string, int> by_workflow;
};

TEST(ConnectionPoolPath, AnAgentWorkflowsCallsBelongToItsTenant) {
  SessionCalls calls;
  Simulation sim(config_of(agent_scenario("coder", "planner")));
  const SimulationResult r = sim.run(calls);
  ASSERT_EQ(calls.by_workflow.size(), 2u);
  EXPECT_GT(calls.by_workflow.at("one"), 30);
  EXPECT_EQ(calls.by_tenant[1], calls.by_workflow.at("one"));
  EXPECT_EQ(calls.by_tenant[0], calls.by_workflow.at("two"));
  ASSERT_EQ(r.tenants.size(), 2u);
  EXPECT_EQ(r.tenants[0].summary.completed, static_cast<uint64_t>(calls.by_workflow.at("two")));
  const StationStats* pool = row(r, "pool p");
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->jobs, static_cast<uint64_t>(calls.by_workflow.at("two")));
}

TEST(ConnectionPoolPath, AnAgentWorkflowsTenantMustExist) {
  expect_one_line_error([] { config_of(agent_scenario("coder", "plannr")); },
                        "workload.agent.workflows[1]: tenant \"plannr\" is not in "
                        "service.tenants (did you mean 'planner'?)");
  nlohmann::json j = agent_scenario("coder", "planner");
  j["service"] = {{"network", {{"rtt_s", 0.01}}}};
  expect_one_line_error([&] { config_of(j); },
                        "workload.agent.workflows[0]: tenant \"coder\" needs service.tenants");
}

}  // namespace
}  // namespace servesim
