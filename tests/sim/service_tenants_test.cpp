// Tenants of the service path (service.tenants): assignment by share (open loop draws, closed
// loop partitions its clients exactly, sessions keep their tenant), each tenant's buckets and
// max_in_flight at the gateway with refusals counted by limit, the tenant's priority reaching
// vLLM's priority scheduling (and only it), determinism, the per-tenant summary and its
// diagnosis, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "models/catalog.h"
#include "models/config_error.h"
#include "sim/metrics/diagnosis.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"
#include "sim/service/tenant_assigner.h"
#include "sim/service/tenant_spec.h"
#include "tests/sim/service_test_run.h"

namespace servesim {
namespace {

using testing::config_of;
using testing::Records;
using testing::run;

nlohmann::json scenario_with(const nlohmann::json& tenants, double rate_qps = 10,
                             int requests = 600) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "model": "Llama-2-7B", "gpu": "A100-80GB", "engine": {"max_model_len": 4096},
    "workload": {"arrival": {"type": "poisson", "rate_qps": 10}, "prompt_tokens": 256,
                 "output_tokens": 32, "num_requests": 600},
    "service": {"network": {"rtt_s": 0.01}, "gateway": {"request_s": 0.0005}},
    "seed": 11})");
  j["workload"]["arrival"]["rate_qps"] = rate_qps;
  j["workload"]["num_requests"] = requests;
  j["service"]["tenants"] = tenants;
  return j;
}

nlohmann::json two_tenants() {
  return nlohmann::json::parse(R"([{"name": "a", "share": 0.3}, {"name": "b", "share": 0.7}])");
}

std::map<uint32_t, int> count_by_tenant(const std::vector<RequestRecord>& records) {
  std::map<uint32_t, int> n;
  for (const RequestRecord& r : records) ++n[r.tenant];
  return n;
}

TEST(TenantAssignment, OpenLoopArrivalsDrawTheirTenantByShare) {
  Records records;
  const SimulationResult r = run(config_of(scenario_with(two_tenants(), 10, 3000)), &records);
  ASSERT_EQ(records.all.size(), 3000u);
  const std::map<uint32_t, int> n = count_by_tenant(records.all);
  // Binomial(3000, 0.3): sd 25; five of them either way.
  EXPECT_NEAR(n.at(0), 900, 125);
  EXPECT_EQ(n.at(0) + n.at(1), 3000);
  ASSERT_EQ(r.tenants.size(), 2u);
  EXPECT_EQ(r.tenants[0].tenant.name, "a");
  EXPECT_EQ(r.tenants[0].summary.requests, static_cast<uint64_t>(n.at(0)));
  EXPECT_EQ(r.tenants[1].summary.completed, static_cast<uint64_t>(n.at(1)));
}

TEST(TenantAssignment, TenantsLeaveEveryOtherDrawAlone) {
  // The tenant draw has a stream of its own: without limits or priorities, the engine sees
  // exactly the requests it saw without tenants, at the same times.
  Records with, without;
  run(config_of(scenario_with(two_tenants())), &with);
  nlohmann::json plain = scenario_with(two_tenants());
  plain["service"].erase("tenants");
  run(config_of(plain), &without);
  ASSERT_EQ(with.all.size(), without.all.size());
  for (size_t i = 0; i < with.all.size(); ++i) {
    EXPECT_EQ(with.all[i].id, without.all[i].id);
    EXPECT_EQ(with.all[i].arrival_s, without.all[i].arrival_s);
    EXPECT_EQ(with.all[i].finish_s, without.all[i].finish_s);
    EXPECT_EQ(without.all[i].tenant, 0u);
  }
}

TEST(TenantAssignment, ClosedLoopClientsArePartitionedExactlyAndInterleaved) {
  const std::vector<uint32_t> p = TenantAssigner::partition({0.3, 0.7}, 10);
  EXPECT_EQ(std::count(p.begin(), p.end(), 0u), 3);
  EXPECT_EQ(std::count(p.begin(), p.end(), 1u), 7);
  // Largest remainder: 3.5 / 1.75 / 1.75 -> 3, 2, 2.
  const std::vector<uint32_t> q = TenantAssigner::partition({0.5, 0.25, 0.25}, 7);
  EXPECT_EQ(std::count(q.begin(), q.end(), 0u), 3);
  EXPECT_EQ(std::count(q.begin(), q.end(), 1u), 2);
  EXPECT_EQ(std::count(q.begin(), q.end(), 2u), 2);
  // Any first k clients are within one client of the shares (a stepped run's small steps).
  const std::vector<uint32_t> s = TenantAssigner::partition({0.25, 0.75}, 16);
  for (uint32_t k = 1; k <= 16; ++k) {
    const auto a = std::count(s.begin(), s.begin() + k, 0u);
    EXPECT_LE(std::abs(static_cast<double>(a) - 0.25 * k), 1.0) << k;
  }
  // Each client keeps its tenant for every request it sends.
  const std::vector<TenantSpec> tenants =
      TenantSpec::list_from_json(two_tenants(), "test: service.tenants");
  TenantAssigner assigner(tenants, 10, 7);
  for (int round = 0; round < 3; ++round) {
    for (uint32_t c = 0; c < 10; ++c) {
      RequestSpec r;
      r.client = c;
      EXPECT_EQ(assigner.assign(r), p[c]);
    }
  }
}

TEST(TenantAssignment, ClosedLoopRunKeepsEachClientsTenant) {
  nlohmann::json j = scenario_with(two_tenants());
  j["workload"] = nlohmann::json::parse(R"({"arrival": {"type": "closed", "clients": 10},
      "prompt_tokens": 128, "output_tokens": 16, "num_requests": 500})");
  Records records;
  const SimulationResult r = run(config_of(j), &records);
  // 3 of 10 identical clients: about 30% of the requests, far tighter than a draw.
  EXPECT_NEAR(static_cast<double>(r.tenants[0].summary.requests), 150, 10);
}

TEST(TenantAssignment, ASteppedRunsClientsKeepTheirTenantAndEveryStepMixesThem) {
  nlohmann::json j = scenario_with(
      nlohmann::json::parse(R"([{"name": "a", "share": 0.5}, {"name": "b", "share": 0.5}])"));
  j["workload"] = nlohmann::json::parse(R"({"arrival": {"type": "stepped", "steps": [2, 4, 8],
      "step_duration_s": 5}, "prompt_tokens": 128, "output_tokens": 16})");
  Records records;
  run(config_of(j), &records);
  std::map<int, std::map<uint32_t, int>> by_step;  // step -> tenant -> requests
  for (const RequestRecord& r : records.all) ++by_step[r.step_index][r.tenant];
  ASSERT_EQ(by_step.size(), 3u);
  for (const auto& [step, tenants] : by_step) {
    SCOPED_TRACE(step);
    ASSERT_EQ(tenants.size(), 2u);  // both tenants in every step, the first (2 clients) too
    const double a = tenants.at(0), b = tenants.at(1);
    EXPECT_NEAR(a / (a + b), 0.5, 0.1);  // half of the step's clients each
  }
}

TEST(TenantAssignment, AnOpenLoopSessionKeepsItsTenantOverItsTurns) {
  const std::vector<TenantSpec> tenants =
      TenantSpec::list_from_json(two_tenants(), "test: service.tenants");
  TenantAssigner assigner(tenants, 0, 3);
  std::map<uint64_t, uint32_t> first;
  for (int turn = 0; turn < 4; ++turn) {
    for (uint64_t session = 0; session < 50; ++session) {
      RequestSpec r;
      r.session = session;
      r.turn = turn;
      r.session_turns = 4;
      const uint32_t t = assigner.assign(r);
      if (turn == 0) first[session] = t;
      EXPECT_EQ(t, first[session]) << session << " turn " << turn;
    }
  }
  int in_a = 0;
  for (const auto& [session, t] : first) in_a += t == 0;
  EXPECT_GT(in_a, 3);
  EXPECT_LT(in_a, 30);
}

TEST(TenantQuota, EachTenantsBucketsAdmitNoMoreThanBurstPlusRate) {
  nlohmann::json tenants = nlohmann::json::parse(R"([
    {"name": "rps", "share": 0.5, "rate_limit": {"requests_per_s": 4, "burst": 8}},
    {"name": "tpm", "share": 0.5, "rate_limit": {"tokens_per_min": 30000}}])");
  Records records;
  const SimulationResult r = run(config_of(scenario_with(tenants, 40, 1600)), &records);
  const double span_s = records.all.back().arrival_s + 0.01;  // last arrival at the gateway
  uint64_t admitted[2] = {0, 0};
  double tokens = 0;
  for (const RequestRecord& rec : records.all) {
    if (rec.cause == FailureCause::kRateLimited) {
      EXPECT_EQ(rec.limit,
                rec.tenant == 0 ? RateLimitKind::kTenantRequests : RateLimitKind::kTenantTokens);
      continue;
    }
    ++admitted[rec.tenant];
    if (rec.tenant == 1) tokens += 256 + 32;
  }
  // Starting full: at most capacity + rate x T pass; flooded, about that many do.
  EXPECT_LE(admitted[0], 8 + 4 * span_s);
  EXPECT_GE(admitted[0], 0.9 * 4 * span_s);
  EXPECT_LE(tokens, 30000 + 500 * span_s);
  EXPECT_GE(tokens, 0.9 * 500 * span_s);
  const std::array<uint64_t, kNumRateLimitKinds>& a = r.tenants[0].refused_by_limit;
  EXPECT_EQ(a[static_cast<size_t>(RateLimitKind::kTenantRequests)],
            r.tenants[0].summary.requests - admitted[0]);
  EXPECT_EQ(r.tenants[0].refused(), r.tenants[0].summary.rejected);
  EXPECT_EQ(r.tenants[1].refused_by_limit[static_cast<size_t>(RateLimitKind::kTenantTokens)],
            r.tenants[1].summary.rejected);
}

TEST(TenantQuota, TheGatewaysOwnLimitStillAppliesAndIsNamed) {
  nlohmann::json j = scenario_with(two_tenants(), 40, 800);
  j["service"]["gateway"]["rate_limit"] = {{"requests_per_s", 10}};
  Records records;
  const SimulationResult r = run(config_of(j), &records);
  uint64_t refused = 0;
  for (const TenantSummary& t : r.tenants) {
    refused += t.refused_by_limit[static_cast<size_t>(RateLimitKind::kGatewayRequests)];
  }
  EXPECT_GT(refused, 400u);
  EXPECT_EQ(refused, r.summary.rejected);
}

// Requests of one tenant between the gateway and the end of their answer, at each admission.
int peak_in_flight(const std::vector<RequestRecord>& records, uint32_t tenant) {
  std::vector<std::pair<double, int>> events;  // (time, +1 admitted / -1 answered)
  for (const RequestRecord& r : records) {
    if (r.tenant != tenant || r.status != RequestOutcome::kOk) continue;
    events.push_back({r.arrival_s + r.segments.network_s, +1});
    events.push_back({r.finish_s, -1});
  }
  std::sort(events.begin(), events.end());  // an answer before an admission at the same time
  int now = 0, peak = 0;
  for (const auto& [t, d] : events) peak = std::max(peak, now += d);
  return peak;
}

TEST(TenantQuota, MaxInFlightIsNeverExceededAndItsRefusalsAreCounted) {
  nlohmann::json tenants = nlohmann::json::parse(R"([
    {"name": "capped", "share": 0.5, "max_in_flight": 4}, {"name": "free", "share": 0.5}])");
  nlohmann::json j = scenario_with(tenants, 30, 900);
  j["workload"]["output_tokens"] = 200;  // long answers: many in flight at once
  Records records;
  const SimulationResult r = run(config_of(j), &records);
  EXPECT_LE(peak_in_flight(records.all, 0), 4);
  EXPECT_EQ(peak_in_flight(records.all, 0), 4);  // the cap is reached
  EXPECT_GT(peak_in_flight(records.all, 1), 8);
  const TenantSummary& capped = r.tenants[0];
  EXPECT_GT(capped.refused_by_limit[static_cast<size_t>(RateLimitKind::kTenantInFlight)], 100u);
  EXPECT_EQ(capped.refused(), capped.summary.rejected);
  EXPECT_EQ(r.tenants[1].summary.rejected, 0u);
}

// An overloaded engine (max_num_seqs 8) with a priority-0 and a priority-1 tenant.
SimulationResult priority_run(const std::string& policy) {
  nlohmann::json tenants = nlohmann::json::parse(R"([
    {"name": "high", "share": 0.3, "priority": 0}, {"name": "low", "share": 0.7, "priority": 1}])");
  nlohmann::json j = scenario_with(tenants, 12, 600);
  j["engine"]["max_num_seqs"] = 8;
  j["engine"]["scheduling_policy"] = policy;
  j["workload"]["output_tokens"] = 64;
  return run(config_of(j));
}

TEST(TenantPriority, PriorityPolicyServesTheHighPriorityTenantFirstAndFcfsDoesNot) {
  const SimulationResult fcfs = priority_run("fcfs");
  const SimulationResult prio = priority_run("priority");
  const double fcfs_high = fcfs.tenants[0].summary.ttft.p50_s;
  const double fcfs_low = fcfs.tenants[1].summary.ttft.p50_s;
  const double prio_high = prio.tenants[0].summary.ttft.p50_s;
  const double prio_low = prio.tenants[1].summary.ttft.p50_s;
  // Under FCFS the priorities change nothing: both tenants queue alike.
  EXPECT_LT(std::max(fcfs_high, fcfs_low) / std::min(fcfs_high, fcfs_low), 1.5);
  // Under priority the high tenant skips the queue.
  EXPECT_LT(prio_high, 0.3 * fcfs_high);
  EXPECT_GT(prio_low, 2 * prio_high);
  EXPECT_EQ(prio.tenants[0].tenant.priority, 0);
  EXPECT_EQ(prio.tenants[1].tenant.priority, 1);
  // And the diagnosis says which tenant waits.
  const std::vector<Finding> why =
      diagnose({prio.summary, prio.replicas, prio.stations, prio.simulated_s, true}, prio.tenants);
  const auto slow = std::find_if(why.begin(), why.end(),
                                 [](const Finding& f) { return f.code == "tenant_slow"; });
  ASSERT_NE(slow, why.end());
  EXPECT_EQ(slow->text.rfind("tenant low waits longest", 0), 0u) << slow->text;
  EXPECT_NE(slow->text.find("(priority 1 vs 0)"), std::string::npos) << slow->text;
}

TEST(TenantPriority, AWarningWhenPrioritiesDifferUnderFcfs) {
  const std::vector<TenantSpec> same =
      TenantSpec::list_from_json(two_tenants(), "test: service.tenants");
  EXPECT_EQ(tenant_priority_warning(same, false), "");
  std::vector<TenantSpec> differ = same;
  differ[1].priority = 1;
  EXPECT_EQ(tenant_priority_warning(differ, true), "");
  const std::string w = tenant_priority_warning(differ, false);
  EXPECT_EQ(w.rfind("warning: service.tenants have different priorities", 0), 0u) << w;
  EXPECT_EQ(w.find('\n'), std::string::npos);
}

TEST(Tenants, SameSeedSameRunAndSameTenants) {
  nlohmann::json tenants = nlohmann::json::parse(R"([
    {"name": "a", "share": 0.4, "priority": 0, "max_in_flight": 3,
     "rate_limit": {"requests_per_s": 3}},
    {"name": "b", "share": 0.6, "priority": 2, "rate_limit": {"tokens_per_min": 40000}}])");
  nlohmann::json j = scenario_with(tenants, 20, 500);
  j["engine"]["scheduling_policy"] = "priority";
  Records first, second;
  const SimulationResult a = run(config_of(j), &first);
  const SimulationResult b = run(config_of(j), &second);
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  ASSERT_EQ(first.all.size(), second.all.size());
  for (size_t i = 0; i < first.all.size(); ++i) {
    EXPECT_EQ(first.all[i].tenant, second.all[i].tenant);
    EXPECT_EQ(first.all[i].limit, second.all[i].limit);
  }
  j["seed"] = 12;
  EXPECT_NE(run(config_of(j)).fingerprint, a.fingerprint);
}

TEST(TenantSummaryJson, CountsRefusalsByLimitAndGoodputAddsUp) {
  nlohmann::json tenants = nlohmann::json::parse(R"([
    {"name": "a", "share": 0.5, "rate_limit": {"requests_per_s": 2}}, {"name": "b", "share": 0.5}])");
  const SimulationResult r = run(config_of(scenario_with(tenants, 20, 400)));
  const nlohmann::json j = tenants_json(r.tenants);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["name"], "a");
  EXPECT_EQ(j[0]["refused_by_limit"]["requests_per_s"], j[0]["rejected"]);
  EXPECT_EQ(j[0]["failed_by_cause"]["rate_limited"], j[0]["rejected"]);
  EXPECT_EQ(j[1]["refused_by_limit"]["requests_per_s"], 0);
  EXPECT_TRUE(j[0]["ttft"]["p99_ms"].is_number());
  const double goodput = j[0]["goodput_output_tokens_per_s"].get<double>() +
                         j[1]["goodput_output_tokens_per_s"].get<double>();
  EXPECT_NEAR(goodput, r.summary.output_throughput, 1e-6 * r.summary.output_throughput);
  const std::vector<Finding> why =
      diagnose({r.summary, r.replicas, r.stations, r.simulated_s}, r.tenants);
  const auto f = std::find_if(why.begin(), why.end(),
                              [](const Finding& x) { return x.code == "tenant_refused"; });
  ASSERT_NE(f, why.end());
  EXPECT_EQ(f->text.rfind("tenant a: ", 0), 0u) << f->text;
  EXPECT_NE(f->text.find("its requests_per_s limit"), std::string::npos) << f->text;
}

TenantSummary tenant_of(const std::string& name, int priority, uint64_t requests,
                        uint64_t refused_tokens, double ttft_p50_s) {
  TenantSummary t;
  t.tenant = {name, priority};
  t.summary.requests = requests;
  t.summary.completed = requests - refused_tokens;
  t.summary.rejected = refused_tokens;
  t.summary.ttft.count = t.summary.completed;
  t.summary.ttft.p50_s = ttft_p50_s;
  t.refused_by_limit[static_cast<size_t>(RateLimitKind::kTenantTokens)] = refused_tokens;
  return t;
}

bool fires(const std::vector<TenantSummary>& tenants, const std::string& code) {
  RunFacts facts;
  facts.summary.requests = 1000;
  facts.summary.completed = 1000;
  for (const Finding& f : diagnose(facts, tenants)) {
    if (f.code == code) return true;
  }
  return false;
}

TEST(TenantDiagnosis, RefusalsFromOnePercentOfATenantsRequestsAndTtftFromTwiceTheFastest) {
  EXPECT_TRUE(fires({tenant_of("a", 0, 1000, 10, 0.1)}, "tenant_refused"));
  EXPECT_FALSE(fires({tenant_of("a", 0, 1000, 9, 0.1)}, "tenant_refused"));
  EXPECT_TRUE(
      fires({tenant_of("a", 0, 100, 0, 0.1), tenant_of("b", 1, 100, 0, 0.2)}, "tenant_slow"));
  EXPECT_FALSE(
      fires({tenant_of("a", 0, 100, 0, 0.1), tenant_of("b", 1, 100, 0, 0.199)}, "tenant_slow"));
  EXPECT_FALSE(fires({tenant_of("a", 0, 100, 0, 0.1)}, "tenant_slow"));  // one tenant
  EXPECT_FALSE(fires({}, "tenant_refused"));
}

TEST(TenantDiagnosis, PrioritiesAreNotTheCauseUnderFcfs) {
  const std::vector<TenantSummary> tenants = {tenant_of("a", 0, 100, 0, 0.1),
                                              tenant_of("b", 1, 100, 0, 0.3)};
  RunFacts facts;
  facts.summary.requests = facts.summary.completed = 200;
  const auto slow_text = [&](bool priority) {
    facts.priority_scheduling = priority;
    for (const Finding& f : diagnose(facts, tenants)) {
      if (f.code == "tenant_slow") return f.text;
    }
    return std::string();
  };
  EXPECT_EQ(slow_text(true),
            "tenant b waits longest for its first token: TTFT p50 300.0 ms, 3.0x tenant a's "
            "100.0 ms (priority 1 vs 0)");
  EXPECT_EQ(slow_text(false),
            "tenant b waits longest for its first token: TTFT p50 300.0 ms, 3.0x tenant a's "
            "100.0 ms (priorities 1 vs 0 do not order the queue under scheduling_policy fcfs; "
            "engine.scheduling_policy=priority makes them)");
}

void expect_refused(const std::string& tenants, const std::string& message) {
  SCOPED_TRACE(tenants);
  try {
    config_of(scenario_with(nlohmann::json::parse(tenants)));
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(TenantSpec, BadTenantsAreRefusedNamingTheKeyAndTheFix) {
  expect_refused(R"([{"name": "a", "share": 0.5}, {"name": "b", "share": 0.4}])",
                 "service.tenants: the shares sum to 0.9; they must sum to 1");
  expect_refused(R"([{"name": "a", "share": 0}, {"name": "b", "share": 1}])",
                 "service.tenants[0]: share must be in (0, 1]");
  expect_refused(R"([{"name": "a", "share": 0.5}, {"name": "a", "share": 0.5}])",
                 "service.tenants[1].name: \"a\" is used by an earlier tenant");
  expect_refused(R"([{"name": "a", "share": 1, "priority": 1.5}])",
                 "service.tenants[0]: priority must be an integer");
  expect_refused(R"([{"name": "a", "share": 1, "max_in_flight": 0}])",
                 "max_in_flight must be an integer >= 1");
  expect_refused(R"([{"name": "a", "share": 1, "rate_limit": {"requests_per_s": -1}}])",
                 "service.tenants[0].rate_limit: requests_per_s must be a finite number >= 0");
  expect_refused(R"([{"name": "a", "share": 1, "rate_limit": {}}])",
                 "or tokens_per_min must be > 0");
  expect_refused(R"([{"name": "a", "share": 1, "max_inflight": 4}])", "max_in_flight");
  expect_refused(R"([{"name": "a,b", "share": 1}])", "name must be letters, digits");
  expect_refused(R"([{"share": 1}])", "service.tenants[0]: name is required");
  expect_refused(R"([])", "service.tenants: must be a non-empty list");
  expect_refused(R"({"name": "a"})", "service.tenants: must be a non-empty list");
}

}  // namespace
}  // namespace servesim
