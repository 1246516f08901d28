// KV offload inside a disaggregated deployment: a role's host tier (vLLM's OffloadingConnector
// beside the transfer connector) keeps what its GPU evicts. On the prefill instances it saves
// the recomputation of earlier turns' histories; each role stores and loads over its own
// GPUs' link with its own bytes per token, and no block is lost on either side.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/catalog.h"
#include "models/config_error.h"
#include "service_test_run.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

// The bundled multi-turn chat on L4s (1 prefill + 2 decode instances, a 64 GiB host tier on
// the prefill instance), shortened.
SimulationConfig chat(std::vector<std::string> overrides = {}) {
  overrides.insert(overrides.begin(), "workload.num_requests=300");
  return load_scenario(SERVESIM_SOURCE_DIR "/configs/scenarios/disagg-kv-offload-chat.json",
                       overrides, Catalog())
      .config;
}

SimulationResult run(const SimulationConfig& c) {
  return testing::run(c);
}

std::vector<const ReplicaSummary*> role_replicas(const SimulationResult& r, ReplicaRole role) {
  std::vector<const ReplicaSummary*> out;
  for (const ReplicaSummary& s : r.replicas) {
    if (s.role == role) out.push_back(&s);
  }
  return out;
}

TEST(DisaggregatedKvOffload, APrefillHostTierKeepsEarlierTurnsHistories) {
  const SimulationResult with = run(chat());
  const SimulationResult without =
      run(chat({"disaggregation.prefill.engine.kv_offloading_size_gib=null"}));
  ASSERT_EQ(with.summary.completed, 300u);
  ASSERT_EQ(without.summary.completed, 300u);
  const auto prefill = role_replicas(with, ReplicaRole::kPrefill);
  ASSERT_EQ(prefill.size(), 1u);
  EXPECT_GT(prefill[0]->host_kv.blocks, 0);
  EXPECT_GT(prefill[0]->host_kv.hit_tokens, 0);
  EXPECT_GT(prefill[0]->host_kv.loaded_bytes, 0);
  for (const ReplicaSummary* d : role_replicas(with, ReplicaRole::kDecode)) {
    EXPECT_EQ(d->host_kv.blocks, 0);  // no tier there
    EXPECT_EQ(d->host_kv.stored_blocks, 0);
  }
  // Turns find their history on the host instead of recomputing it.
  const auto prefill_without = role_replicas(without, ReplicaRole::kPrefill);
  EXPECT_GT(with.summary.prefix_cache_hit_rate, without.summary.prefix_cache_hit_rate + 0.2);
  EXPECT_GT(prefill[0]->host_kv.hit_rate(), 0.2);
  EXPECT_LT(prefill[0]->busy_s, 0.6 * prefill_without[0]->busy_s);
  EXPECT_LT(with.summary.ttft.mean_s, 0.7 * without.summary.ttft.mean_s);
  for (const ReplicaSummary& r : with.replicas) EXPECT_EQ(r.kv_blocks_used_at_end, 0);
}

TEST(DisaggregatedKvOffload, EachRoleMovesItsOwnBytesOverItsOwnGpusLink) {
  // A top-level tier applies to both roles; the prefill instance on an H100 (PCIe 5), the
  // decode instances on L4s (PCIe 4).
  const SimulationConfig c = chat({"engine.kv_offloading_size_gib=16",
                                   "disaggregation.prefill.engine.kv_offloading_size_gib=32",
                                   "disaggregation.prefill.gpu=\"H100-SXM\""});
  const Simulation sim(c);
  EXPECT_DOUBLE_EQ(sim.host_kv_bandwidth_Bps(/*prefill=*/true),
                   c.disaggregation.prefill.gpu.pcie_Bps);
  EXPECT_DOUBLE_EQ(sim.host_kv_bandwidth_Bps(), c.disaggregation.decode.gpu.pcie_Bps);
  EXPECT_NE(c.disaggregation.prefill.gpu.pcie_Bps, c.disaggregation.decode.gpu.pcie_Bps);
  EXPECT_EQ(sim.prefill_memory_plan().num_host_kv_blocks, 2 * sim.memory_plan().num_host_kv_blocks);
  const SimulationResult r = run(c);
  const auto prefill = role_replicas(r, ReplicaRole::kPrefill);
  const auto decode = role_replicas(r, ReplicaRole::kDecode);
  ASSERT_EQ(prefill.size(), 1u);
  ASSERT_EQ(decode.size(), 2u);
  EXPECT_DOUBLE_EQ(prefill[0]->host_kv.bandwidth_Bps, c.disaggregation.prefill.gpu.pcie_Bps);
  EXPECT_EQ(prefill[0]->host_kv.blocks, sim.prefill_memory_plan().num_host_kv_blocks);
  for (const ReplicaSummary* d : decode) {
    EXPECT_DOUBLE_EQ(d->host_kv.bandwidth_Bps, c.disaggregation.decode.gpu.pcie_Bps);
    EXPECT_EQ(d->host_kv.blocks, sim.memory_plan().num_host_kv_blocks);
    EXPECT_GT(d->host_kv.stored_blocks, 0);  // decode instances store what they compute
  }
  // A block stored costs its role's bytes: block_size tokens of that role's KV per GPU.
  const double block_bytes =
      c.disaggregation.prefill.engine.block_size * sim.prefill_memory_plan().kv_bytes_per_token;
  EXPECT_DOUBLE_EQ(prefill[0]->host_kv.stored_bytes,
                   static_cast<double>(prefill[0]->host_kv.stored_blocks) * block_bytes);
}

TEST(DisaggregatedKvOffload, SameSeedSameRun) {
  const SimulationConfig c = chat({"engine.kv_offloading_size_gib=16"});
  EXPECT_EQ(run(c).fingerprint, run(c).fingerprint);
}

TEST(DisaggregatedKvOffload, ATierOnARoleWithoutPcieNamesTheRoleAndTheKey) {
  // A prefill GPU with NVLink but "pcie_gbs": 0 (with neither, the comm model refuses it first).
  SimulationConfig c = chat({"disaggregation.prefill.gpu=\"H100-SXM\""});
  c.disaggregation.prefill.gpu.pcie_Bps = 0;
  std::string error;
  try {
    Simulation sim(c);
  } catch (const ConfigError& e) {
    error = e.what();
  }
  EXPECT_EQ(error,
            "disaggregation.prefill: engine.kv_offloading_size_gib: GPU H100-SXM has no PCIe "
            "bandwidth (pcie_gbs 0); set engine.kv_offloading_bandwidth_GBps");
  // A bandwidth given for the role is what its link runs at.
  c.disaggregation.prefill.engine.kv_offloading_bandwidth_Bps = 12e9;
  const Simulation sim(c);
  EXPECT_DOUBLE_EQ(sim.host_kv_bandwidth_Bps(/*prefill=*/true), 12e9);
}

}  // namespace
}  // namespace servesim
