// The planner searches expert parallelism for MoE models: the placements it enumerates, the
// server an expert-parallel candidate stands for, and the `vllm serve` line it prints.
#include <gtest/gtest.h>

#include <string>

#include "plan/planner.h"

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

}  // namespace
}  // namespace servesim
