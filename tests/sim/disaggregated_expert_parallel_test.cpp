// Expert parallelism inside a disaggregated deployment (wide EP per role, as llm-d and Dynamo
// run DeepSeek-style MoE models): each role's instance is one server of data_parallel_size
// ranks whose MoE layers form one EP group, so the ranks of an instance step together while
// the two roles step apart; the role's GPUs, memory and cost follow its own placement.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "models/catalog.h"
#include "models/config_error.h"
#include "service_test_run.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

using ::testing::HasSubstr;

// Mixtral (8 experts) with 1 prefill instance of TP 2 and 1 decode instance of TP 2 x DP 2:
// EP 4 on the decode side when expert parallelism is on.
nlohmann::json scenario(bool expert_parallel) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "model": "Mixtral-8x7B",
    "gpu": "H100-SXM",
    "parallel": {"tensor_parallel_size": 2},
    "engine": {"max_model_len": 8192},
    "service": "none",
    "disaggregation": {
      "prefill": {"instances": 1},
      "decode": {"instances": 1, "data_parallel_size": 2},
      "kv_transfer": {"link": "infiniband"}
    },
    "workload": {"arrival": {"type": "poisson", "rate_qps": 4},
                 "prompt_tokens": {"type": "uniform", "min": 200, "max": 3000},
                 "output_tokens": {"type": "uniform", "min": 8, "max": 120},
                 "num_requests": 80},
    "seed": 9
  })");
  j["parallel"]["enable_expert_parallel"] = expert_parallel;
  return j;
}

SimulationConfig config_of(const nlohmann::json& j,
                           const std::vector<std::string>& overrides = {}) {
  return testing::config_of(j, overrides);
}

using RunOutcome = testing::RecordedRun;

RunOutcome run(const SimulationConfig& c) {
  return testing::run_recorded(c);
}

using testing::error_of;

std::vector<const ReplicaSummary*> role_replicas(const SimulationResult& r, ReplicaRole role) {
  std::vector<const ReplicaSummary*> out;
  for (const ReplicaSummary& s : r.replicas) {
    if (s.role == role) out.push_back(&s);
  }
  return out;
}

TEST(DisaggregatedExpertParallel, RolesReadTheirRanksAndTakeTheScenariosExpertFlags) {
  nlohmann::json j = scenario(true);
  j["parallel"]["expert_popularity"] = "zipf";
  const SimulationConfig c = config_of(j, {"disaggregation.prefill.enable_expert_parallel=false"});
  const DisaggregationSpec& d = c.disaggregation;
  EXPECT_EQ(d.decode.parallel.dp, 2);
  EXPECT_TRUE(d.decode.parallel.enable_expert_parallel);
  EXPECT_EQ(d.decode.parallel.ep(), 4);
  EXPECT_DOUBLE_EQ(d.decode.parallel.expert_zipf_exponent, 1.0);
  EXPECT_EQ(d.prefill.parallel.dp, 1);
  EXPECT_FALSE(d.prefill.parallel.enable_expert_parallel);
  EXPECT_EQ(d.total_gpus(), 2 + 4);
  EXPECT_EQ(d.describe(),
            "1P (TP 2 on H100-SXM) + 1D (TP 2, DP 2, EP 4 on H100-SXM), NixlConnector over "
            "infiniband");
  const Simulation sim(c);
  EXPECT_EQ(sim.config().metrics.num_gpus, 6);
}

// `clients` requests sent at once, 1,000-token prompts answered with 100 tokens each.
SimulationConfig at_once(bool expert_parallel, int clients,
                         const std::vector<std::string>& more = {}) {
  nlohmann::json j = scenario(expert_parallel);
  j["workload"] = nlohmann::json::parse(R"({
      "arrival": {"type": "closed", "clients": 2, "think_time_s": 0},
      "prompt_tokens": {"type": "uniform", "min": 100, "max": 7000},
      "output_tokens": 100, "num_requests": 2})");
  j["workload"]["arrival"]["clients"] = clients;
  j["workload"]["num_requests"] = clients;
  return config_of(j, more);
}

double relative_gap(double a, double b) {
  return std::abs(a - b) / std::max(a, b);
}

TEST(DisaggregatedExpertParallel, TheDecodeRanksStepAtTheBusiestRanksPace) {
  // Three requests over two decode ranks (round robin): rank 0 decodes two, rank 1 one. A
  // MoE step of two tokens reads more experts than a step of one.
  const std::vector<std::string> round_robin = {"workload.prompt_tokens=1000",
                                                "disaggregation.decode_router=\"round_robin\""};
  const auto tpot_by_rank = [](const RunOutcome& r) {
    std::vector<double> lone, pair;
    for (const RequestRecord& rec : r.records) {
      (rec.replica == r.records.front().replica ? pair : lone).push_back(rec.tpot_s());
    }
    if (lone.size() == 2) std::swap(lone, pair);
    return std::pair{lone, pair};
  };
  // Independent decode ranks: the lone request's steps are the faster ones.
  const auto [lone_apart, pair_apart] = tpot_by_rank(run(at_once(false, 3, round_robin)));
  ASSERT_EQ(lone_apart.size(), 1u);
  ASSERT_EQ(pair_apart.size(), 2u);
  EXPECT_LT(lone_apart[0], 0.8 * pair_apart[0]);
  // One EP group: the lone request's rank steps as long as the busier one.
  const RunOutcome together = run(at_once(true, 3, round_robin));
  const auto [lone, pair] = tpot_by_rank(together);
  ASSERT_EQ(lone.size(), 1u);
  ASSERT_EQ(pair.size(), 2u);
  EXPECT_LT(relative_gap(lone[0], pair[0]), 0.01);
}

TEST(DisaggregatedExpertParallel, PrefillRanksOfOneInstanceEndTheirPrefillsTogether) {
  // Two prompts of different lengths (687 and 1,746 tokens at this seed), one per rank of one
  // prefill server. A record's prefill segment adds the decode side's first step, a few
  // microseconds apart on the two decode ranks; the prefills themselves differ by
  // milliseconds when the ranks step apart.
  const auto prefill_end = [](const RequestRecord& r) {
    return r.arrival_s + r.segments.engine_queue_s + r.segments.prefill_s;
  };
  const RunOutcome apart = run(at_once(true, 2,
                                       {"disaggregation.prefill.data_parallel_size=2",
                                        "disaggregation.prefill.enable_expert_parallel=false"}));
  ASSERT_EQ(apart.records.size(), 2u);
  EXPECT_GT(std::abs(prefill_end(apart.records[0]) - prefill_end(apart.records[1])), 5e-3);
  const RunOutcome together =
      run(at_once(true, 2, {"disaggregation.prefill.data_parallel_size=2"}));
  ASSERT_EQ(together.records.size(), 2u);
  EXPECT_NEAR(prefill_end(together.records[0]), prefill_end(together.records[1]), 1e-4);
  // Two such servers step apart: four prompts sent at once go round-robin to ranks 0 and 1
  // (server 0) and 2 and 3 (server 1); each server's pair ends together, the servers apart.
  RunOutcome servers = run(
      at_once(true, 4,
              {"disaggregation.prefill.instances=2", "disaggregation.prefill.data_parallel_size=2",
               "disaggregation.prefill_router=\"round_robin\""}));
  ASSERT_EQ(servers.records.size(), 4u);
  EXPECT_EQ(role_replicas(servers.result, ReplicaRole::kPrefill).size(), 4u);
  std::sort(servers.records.begin(), servers.records.end(),
            [](const RequestRecord& a, const RequestRecord& b) { return a.id < b.id; });
  const std::vector<RequestRecord>& r = servers.records;
  EXPECT_NEAR(prefill_end(r[0]), prefill_end(r[1]), 1e-4);
  EXPECT_NEAR(prefill_end(r[2]), prefill_end(r[3]), 1e-4);
  EXPECT_GT(std::abs(prefill_end(r[0]) - prefill_end(r[2])), 5e-3);
}

TEST(DisaggregatedExpertParallel, EveryRequestIsServedOnceThroughBothRoles) {
  const RunOutcome r = run(config_of(scenario(true)));
  std::set<uint64_t> ids;
  for (const RequestRecord& rec : r.records) {
    EXPECT_EQ(rec.status, RequestOutcome::kOk);
    EXPECT_TRUE(ids.insert(rec.id).second) << "request " << rec.id << " twice";
    EXPECT_GE(rec.first_token_s, rec.arrival_s);
    EXPECT_GE(rec.finish_s, rec.first_token_s);
  }
  EXPECT_EQ(ids.size(), 80u);
  for (const ReplicaSummary& s : r.result.replicas) EXPECT_EQ(s.kv_blocks_used_at_end, 0);
}

TEST(DisaggregatedExpertParallel, SameSeedSameFingerprint) {
  const SimulationConfig c = config_of(scenario(true), {"parallel.expert_popularity=\"zipf\""});
  EXPECT_EQ(run(c).result.fingerprint, run(c).result.fingerprint);
  EXPECT_NE(run(c).result.fingerprint, run(config_of(scenario(false))).result.fingerprint);
}

TEST(DisaggregatedExpertParallel, TheRolesMemoryFollowsItsExpertPlacement) {
  // EP 4: each GPU holds 2 whole experts; TP 2 without EP splits all 8 over 2 GPUs.
  const Simulation ep(config_of(scenario(true)));
  const Simulation tp(config_of(scenario(false)));
  EXPECT_LT(ep.memory_plan().weights_bytes, tp.memory_plan().weights_bytes);
  EXPECT_GT(ep.memory_plan().kv_cache_tokens, tp.memory_plan().kv_cache_tokens);
  // The prefill instance (TP 2, EP 2) keeps the TP 2 split of experts' bytes.
  EXPECT_EQ(ep.prefill_memory_plan().weights_bytes, tp.prefill_memory_plan().weights_bytes);
}

TEST(DisaggregatedExpertParallel, BadRolePlacementsAreOneLineErrors) {
  nlohmann::json dense = scenario(true);
  dense["model"] = "Llama-3.1-8B";
  const std::string moe = error_of(dense);
  EXPECT_THAT(moe, HasSubstr("disaggregation.prefill: --enable-expert-parallel needs a "
                             "mixture-of-experts model"));
  EXPECT_EQ(moe.find('\n'), std::string::npos);
  EXPECT_THAT(error_of(scenario(true), {"disaggregation.decode.data_parallel_size=8"}),
              HasSubstr("disaggregation.decode: --enable-expert-parallel: EP = TP 2 x DP 8 = 16 "
                        "does not divide the 8 experts"));
  EXPECT_THAT(error_of(scenario(true), {"disaggregation.decode.data_parallel_size=0"}),
              HasSubstr("disaggregation.decode: data_parallel_size must be in [1, 4096]"));
  EXPECT_THAT(error_of(scenario(true), {"disaggregation.decode.instances=4096"}),
              HasSubstr("instances x data_parallel_size must be at most 4096"));
  EXPECT_THAT(error_of(scenario(true), {"disaggregation.decode.enable_expert_parallel=1"}),
              HasSubstr("enable_expert_parallel"));
  EXPECT_THAT(error_of(scenario(true), {"parallel.data_parallel_size=2"}),
              HasSubstr("disaggregation.prefill.instances"));
}

}  // namespace
}  // namespace servesim
