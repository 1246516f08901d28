// The planner searches expert parallelism for MoE models: the placements it enumerates, the
// server an expert-parallel candidate stands for, and the `vllm serve` line it prints;
// disaggregated groups place their experts the same way in both roles.
#include <gtest/gtest.h>

#include <string>

#include "models/catalog.h"
#include "models/config_error.h"
#include "plan/evaluator.h"
#include "plan/planner.h"
#include "sim/service/vllm_frontend.h"

namespace servesim {
namespace {

PlanOptions moe_plan(const char* model) {
  PlanOptions o;
  o.scenario = nlohmann::json::parse(R"({
    "gpu": "H100-SXM",
    "engine": {"max_model_len": 4096},
    "workload": {"arrival": {"type": "poisson", "rate_qps": 1}, "prompt_tokens": 512,
                 "output_tokens": 64, "num_requests": 100},
    "seed": 2
  })");
  o.scenario["model"] = model;
  o.target_load = 4;  // requests/s
  o.slos = {parse_slo_target("ttft:p99=2"), parse_slo_target("tpot:p99=0.1")};
  o.gpus = {"H100-SXM"};
  o.tp = {2};
  o.requests = 120;
  o.top_k = 1;
  o.threads = 1;
  return o;
}

TEST(ExpertParallelPlan, MoeModelsSearchTensorAndExpertParallelPlacements) {
  const PlanReport r = plan(moe_plan("Mixtral-8x7B"), Catalog());
  // TP 2 with experts tensor parallel, and expert parallel over DP 1, 2 and 4 (EP 2, 4, 8).
  EXPECT_EQ(r.enumerated, 4u);
  int expert_parallel = 0;
  for (const PlanCandidate& c : r.candidates) {
    if (!c.expert_parallel) continue;
    ++expert_parallel;
    EXPECT_EQ(c.gpus_per_replica, c.tp * c.dp);
  }
  EXPECT_EQ(expert_parallel, 3);
  EXPECT_EQ(plan(moe_plan("Llama-3.1-8B"), Catalog()).enumerated, 1u);  // dense: no EP
}

TEST(ExpertParallelPlan, FixingThePlacementKeepsOneAndTheServeLineNamesIt) {
  PlanOptions o = moe_plan("Mixtral-8x7B");
  o.fixed = {"parallel.enable_expert_parallel=false"};
  EXPECT_EQ(plan(o, Catalog()).enumerated, 1u);
  o.fixed = {"parallel.enable_expert_parallel=true", "parallel.data_parallel_size=2"};
  const PlanReport r = plan(o, Catalog());
  ASSERT_EQ(r.enumerated, 1u);
  ASSERT_TRUE(r.feasible()) << r.to_table(3);
  const PlanCandidate& w = r.candidates.front();
  EXPECT_TRUE(w.expert_parallel);
  EXPECT_EQ(w.dp, 2);
  EXPECT_EQ(w.total_gpus, w.replicas * 4);
  const std::string cmd = r.vllm_commands().at(0);
  EXPECT_NE(cmd.find("--tensor-parallel-size 2 --data-parallel-size 2 --enable-expert-parallel"),
            std::string::npos)
      << cmd;
  const std::string table = r.to_table(3);
  EXPECT_NE(table.find("x DP 2, expert parallel (EP 4)"), std::string::npos) << table;
  EXPECT_EQ(r.to_json()["candidates"][0]["expert_parallel"], true);
}

TEST(ExpertParallelPlan, AFixedPlacementCountsItsRanksInTheSmallestReplica) {
  PlanOptions o = moe_plan("Mixtral-8x7B");
  o.fixed = {"parallel.enable_expert_parallel=true", "parallel.data_parallel_size=2"};
  o.max_gpus = 3;  // one server is TP 2 x DP 2 = 4 GPUs
  try {
    plan(o, Catalog());
    ADD_FAILURE() << "--max-gpus 3 below a 4-GPU server was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--max-gpus 3 is below the smallest replica (4 GPUs"),
              std::string::npos)
        << e.what();
  }
}

TEST(ExpertParallelPlan, DisaggregatedGroupsPlaceTheirExpertsAlike) {
  PlanOptions o = moe_plan("Mixtral-8x7B");
  o.pd_ratios = std::vector<PdRatio>{{1, 1}};
  o.aggregated = false;
  o.fixed = {"parallel.enable_expert_parallel=true", "parallel.data_parallel_size=2"};
  const PlanReport r = plan(o, Catalog());
  ASSERT_EQ(r.enumerated, 1u);
  ASSERT_TRUE(r.feasible()) << r.to_table(3);
  const PlanCandidate& w = r.candidates.front();
  ASSERT_TRUE(w.disaggregated());
  EXPECT_TRUE(w.expert_parallel);
  EXPECT_EQ(w.dp, 2);
  // Each instance: one server of 2 ranks of TP 2.
  EXPECT_EQ(w.gpus_per_replica, (1 * 2 + 1 * 2) * 2);
  EXPECT_EQ(w.shape(), "1P TP2 EP4 (DP2) + 1D TP2 EP4 (DP2)");
  const std::vector<std::string> cmds = r.vllm_commands();
  ASSERT_EQ(cmds.size(), 2u);
  for (const std::string& cmd : cmds) {
    EXPECT_NE(cmd.find("--tensor-parallel-size 2 --data-parallel-size 2 --enable-expert-parallel"),
              std::string::npos)
        << cmd;
    EXPECT_NE(cmd.find("--kv-transfer-config"), std::string::npos) << cmd;
  }
  const std::string table = r.to_table(3);
  EXPECT_NE(table.find("| 1P TP2 EP4 (DP2) + 1D TP2 EP4 (DP2)"), std::string::npos) << table;
  EXPECT_NE(table.find("decode instances, each a server of 2 data-parallel ranks behind a "
                       "disaggregating proxy"),
            std::string::npos)
      << table;
  // Without the fix the group is searched with each placement: TP and EP over 1, 2, 4 ranks.
  o.fixed.clear();
  EXPECT_EQ(plan(o, Catalog()).enumerated, 4u);
}

TEST(ExpertParallelPlan, TheGroupsEvaluationRunsEachRolesRanksAsOneServer) {
  const PlanOptions o = moe_plan("Mixtral-8x7B");
  SimulationConfig base;
  base.model = Catalog().resolve_model("Mixtral-8x7B");
  base.workload.prompt_tokens = LengthDistribution::fixed(512);
  base.workload.output_tokens = LengthDistribution::fixed(32);
  base.service = vllm_service();
  const Evaluator evaluator(o, base, nlohmann::json(), nlohmann::json());
  PlanCandidate c;
  c.prefill_instances = 1;
  c.decode_instances = 2;
  c.prefill_tp = 2;
  c.tp = 2;
  c.dp = 2;
  c.expert_parallel = true;
  c.max_num_seqs = 64;
  c.prefill_engine.max_num_seqs = 64;
  const HardwareSpec gpu = Catalog().resolve_gpu("H100-SXM");
  const SimulationConfig cfg = evaluator.config(gpu, gpu, c, 3, PlanLoad::kQps, 2, 100);
  const DisaggregationSpec& d = cfg.disaggregation;
  ASSERT_TRUE(d.enabled);
  EXPECT_EQ(d.decode.instances, 6);
  EXPECT_EQ(d.decode.parallel.dp, 2);
  EXPECT_TRUE(d.decode.parallel.enable_expert_parallel);
  EXPECT_EQ(d.prefill.parallel.ep(), 4);
  EXPECT_EQ(d.total_gpus(), 3 * (1 * 2 + 2 * 2) * 2);
  // One API server per decode server (the simulation's, per decode instance), not per rank.
  EXPECT_EQ(cfg.service.frontend.station.workers, 1);
}

}  // namespace
}  // namespace servesim
