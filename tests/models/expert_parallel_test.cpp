// Expert parallelism in the models room: ExpertLoad's busiest-rank share, the all-to-all's
// time against hand computation, the roofline's EP MoE layer (dispatch/combine volume for a
// known routing, imbalance 0 = uniform, slower as the skew grows) and per-GPU weights.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "models/batch_shape.h"
#include "models/catalog.h"
#include "models/comm_model.h"
#include "models/config_error.h"
#include "models/engine_config.h"
#include "models/expert_load.h"
#include "models/memory_plan.h"
#include "models/roofline_cost_model.h"

namespace servesim {
namespace {

constexpr size_t kComm = static_cast<size_t>(Op::kComm);
constexpr size_t kMlp = static_cast<size_t>(Op::kMlp);

TEST(ExpertLoadTest, UniformRoutingSpreadsEvenly) {
  const ExpertLoad load(256, 8, 32, 0);
  for (double s : load.expert_shares()) EXPECT_DOUBLE_EQ(s, 1.0 / 256);
  EXPECT_NEAR(load.busiest_rank_share(), 1.0 / 32, 1e-15);
  EXPECT_NEAR(load.imbalance(), 1.0, 1e-12);
  EXPECT_EQ(ExpertLoad(8, 2, 1, 1.5).busiest_rank_share(), 1);  // one rank holds everything
}

TEST(ExpertLoadTest, ZipfSharesAndTheHottestRankByHand) {
  // 4 experts, top-1, s = 1: shares 1, 1/2, 1/3, 1/4 over H = 25/12 -> 12/25, 6/25, 4/25, 3/25.
  const ExpertLoad load(4, 1, 2, 1.0);
  ASSERT_EQ(load.expert_shares().size(), 4u);
  EXPECT_NEAR(load.expert_shares()[0], 12.0 / 25, 1e-15);
  EXPECT_NEAR(load.expert_shares()[3], 3.0 / 25, 1e-15);
  // 2 experts per rank: the hottest (12/25) plus the mean of the other three (13/25 / 3).
  EXPECT_NEAR(load.busiest_rank_share(), 12.0 / 25 + 13.0 / 75, 1e-15);
}

TEST(ExpertLoadTest, TopKCapsAnExpertAtEveryToken) {
  // top-2 of 4 with a steep skew: no expert can take more than half the assignments.
  const ExpertLoad load(4, 2, 4, 4.0);
  const auto& shares = load.expert_shares();
  EXPECT_NEAR(shares[0], 0.5, 1e-12);
  EXPECT_NEAR(std::accumulate(shares.begin(), shares.end(), 0.0), 1.0, 1e-12);
  for (size_t i = 1; i < shares.size(); ++i) EXPECT_LE(shares[i], shares[i - 1]);
}

TEST(ExpertLoadTest, BusiestShareGrowsWithTheExponentUntilTheCap) {
  double previous = 0;
  for (double s : {0.0, 0.25, 0.5, 0.75}) {
    const double share = ExpertLoad(128, 8, 16, s).busiest_rank_share();
    EXPECT_GT(share, previous) << "s = " << s;
    previous = share;
  }
  // From s = 1 on the hottest of 128 experts is in every token's top 8: the share stops at
  // 1/8 + 7 x (7/8) / 127.
  for (double s : {1.0, 2.0, 4.0}) {
    EXPECT_NEAR(ExpertLoad(128, 8, 16, s).busiest_rank_share(), 0.125 + 7 * 0.875 / 127, 1e-12);
  }
}

TEST(CommModelAllToAll, InsideOneNodeAndAcrossNodesByHand) {
  CommOptions o;
  o.all_to_all_latency_s = 10e-6;
  o.send_recv_efficiency = 0.8;
  o.inter_node_Bps = 50e9;
  const CommModel comm(100e9, o);
  // 8 ranks in a node, 8 MB each: 7/8 of it over NVLink, 8e6 * 7/8 / 80e9 = 87.5 us, + 10 us.
  EXPECT_NEAR(comm.all_to_all_s(8'000'000, 8), 97.5e-6, 1e-12);
  // 16 ranks over two nodes: 7/16 over NVLink (43.75 us) while 8/16 cross the network,
  // 8e6 * 8/16 / (50e9 * 0.8) = 100 us: the network sets the time.
  EXPECT_NEAR(comm.all_to_all_s(8'000'000, 16), 110e-6, 1e-12);
  EXPECT_EQ(comm.all_to_all_s(8'000'000, 1), 0);
  EXPECT_EQ(comm.all_to_all_s(0, 8), 0);
}

TEST(CommModelAllToAll, BadNodeOptionsAreRefused) {
  CommOptions o;
  o.gpus_per_node = 0;
  EXPECT_THROW(CommModel(100e9, o), ConfigError);
  o = {};
  o.inter_node_Bps = 0;
  EXPECT_THROW(CommModel(100e9, o), ConfigError);
  o = {};
  o.all_to_all_latency_s = -1;
  EXPECT_THROW(CommModel(100e9, o), ConfigError);
}

struct Deployment {
  Catalog catalog;
  ModelSpec model = catalog.resolve_model("Mixtral-8x7B");
  HardwareSpec gpu = catalog.resolve_gpu("H100-SXM");
  EngineConfig engine;

  RooflineCostModel cost(int tp, int dp, bool ep, double s = 0) const {
    ParallelConfig p;
    p.tp = tp;
    p.dp = dp;
    p.enable_expert_parallel = ep;
    p.expert_zipf_exponent = s;
    return RooflineCostModel(model, gpu, p, engine);
  }
};

BatchShape decode_batch(int seqs, int context) {
  BatchShape b;
  for (int i = 0; i < seqs; ++i) b.add_sequence(1, context, false, true);
  return b;
}

TEST(RooflineExpertParallel, DispatchAndCombineVolumeOfAKnownRoutingByHand) {
  const Deployment d;
  const BatchShape b = decode_batch(64, 1000);
  // TP 1, DP 2, EP 2: each rank routes 64 tokens x top-2 = 128 rows of 4096 bf16 values
  // (1 MiB) and, uniform, receives as many; half stays on the GPU. Per MoE layer: a dispatch
  // and a combine, no TP all-reduce (TP 1); 32 MoE layers; no LM-head gather at TP 1.
  const double bytes = 64 * 2 * 4096 * 2.0;
  const CommOptions o;
  const double link = d.gpu.interconnect_Bps() * o.send_recv_efficiency;
  const double a2a = o.all_to_all_latency_s + bytes * 0.5 / link;
  const StepTime t = d.cost(1, 2, true).predict(b);
  EXPECT_NEAR(t.op_s[kComm], 32 * 2 * a2a, 1e-12);
  EXPECT_EQ(d.cost(1, 2, false).predict(b).op_s[kComm], 0);  // two independent replicas
}

TEST(RooflineExpertParallel, ImbalanceZeroIsUniformAndTheStepGrowsWithTheExponent) {
  const Deployment d;
  const BatchShape b = decode_batch(128, 2000);
  // At s = 0 the busiest rank gets 1/EP of the rows: EP 8 (TP 8) does the FLOPs and reads the
  // weight bytes TP 8 splitting every expert does; only the activations it reads differ (each
  // routed row once on one rank instead of every token on every rank).
  const double ep8 = d.cost(8, 1, true, 0).predict(b).op_s[kMlp];
  const double tp8 = d.cost(8, 1, false).predict(b).op_s[kMlp];
  EXPECT_NEAR(ep8, tp8, 0.05 * tp8);
  const StepTime uniform = d.cost(2, 4, true, 0).predict(b);
  double previous = uniform.total_s;
  for (double s : {0.5, 1.0, 2.0}) {
    const double t = d.cost(2, 4, true, s).predict(b).total_s;
    EXPECT_GT(t, previous) << "s = " << s;
    previous = t;
  }
}

TEST(RooflineExpertParallel, WeightsPerGpuFollowThePlacement) {
  const Deployment d;
  EngineConfig e;
  e.max_model_len = 4096;
  ParallelConfig tp2;
  tp2.tp = 2;
  ParallelConfig ep8 = tp2;
  ep8.dp = 4;
  ep8.enable_expert_parallel = true;  // 8 experts over 8 ranks: one whole expert per GPU
  const MemoryPlan a = MemoryPlan::compute(d.model, d.gpu, tp2, e);
  const MemoryPlan b = MemoryPlan::compute(d.model, d.gpu, ep8, e);
  const double expert_bytes = static_cast<double>(d.model.expert_params_per_layer()) / 8 * 2;
  // TP 2 holds half of each of the 8 experts (4 experts' worth), EP 8 one: 3 fewer per layer.
  EXPECT_NEAR(static_cast<double>(a.weights_bytes - b.weights_bytes),
              3 * expert_bytes * d.model.num_layers, 1e3);
  EXPECT_GT(b.kv_cache_tokens, a.kv_cache_tokens);  // the freed memory holds KV
  EXPECT_NEAR(static_cast<double>(b.weights_total_bytes), static_cast<double>(b.weights_bytes) * 8,
              8.0);
}

}  // namespace
}  // namespace servesim
