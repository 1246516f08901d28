// KV-cache offload in the simulator: the host tier's size from --kv-offloading-size by hand,
// the PCIe link's queues, and whole runs of multi-turn chat whose histories the GPU cache
// cannot keep: the host tier serves them (higher prefix hit rate, lower TTFT), segments add up
// to the TTFT with the load as kv_transfer, no block is left behind, the run is deterministic,
// and bad settings are one-line errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "models/memory_plan.h"
#include "service_test_run.h"
#include "sim/serving/host_kv_link.h"

namespace servesim {
namespace {

using ::testing::HasSubstr;

// Chat sessions whose histories (2,000-3,500 tokens each) outgrow a GPU cache cut to 1,000
// blocks (16,000 tokens) between turns.
nlohmann::json scenario() {
  return nlohmann::json::parse(R"({
    "model": "Llama-3.1-8B",
    "gpu": "L4",
    "engine": {"max_model_len": 12288, "num_gpu_blocks_override": 1000,
               "kv_offloading_size_gib": 16},
    "service": "none",
    "workload": {
      "arrival": {"type": "poisson", "rate_qps": 0.15},
      "prompt_tokens": {"type": "uniform", "min": 1500, "max": 2500},
      "output_tokens": {"type": "uniform", "min": 50, "max": 150},
      "multi_turn": {"turns": 4, "user_tokens": 200,
                     "think_time_s": {"type": "exponential", "mean": 8}},
      "num_requests": 160
    },
    "seed": 3
  })");
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

TEST(HostKvLink, EachDirectionQueuesOnItsOwn) {
  HostKvLink link(10e9, 1e-5);
  // 1 GB at 10 GB/s: 0.1 s plus the latency; the second load waits for the first.
  EXPECT_NEAR(link.load(0, 1e9), 0.1 + 1e-5, 1e-12);
  EXPECT_NEAR(link.load(0.05, 1e9), 0.2 + 2e-5, 1e-12);
  // A store meanwhile is not delayed: PCIe is full duplex.
  EXPECT_NEAR(link.store(0.05, 1e9), 0.15 + 1e-5, 1e-12);
  // After an idle gap the link starts at once.
  EXPECT_NEAR(link.load(1.0, 0), 1.0 + 1e-5, 1e-12);
  EXPECT_EQ(link.num_loads(), 3);
  EXPECT_NEAR(link.load_busy_s(), 0.2 + 3e-5, 1e-12);
  EXPECT_NEAR(link.stored_bytes(), 1e9, 1);
  EXPECT_THROW(HostKvLink(0, 0), std::invalid_argument);
}

TEST(KvOffloadMemory, HostBlocksAreEachGpusShareOverOneBlocksBytes) {
  const Catalog catalog;
  const ModelSpec model = catalog.resolve_model("Llama-3.1-8B");
  const HardwareSpec gpu = catalog.resolve_gpu("H100-SXM");
  ParallelConfig parallel;
  parallel.tp = 2;
  EngineConfig e;
  e.max_model_len = 8192;
  e.kv_offloading_size_gib = 64;
  const MemoryPlan plan = MemoryPlan::compute(model, gpu, parallel, e);
  // 32 GiB per GPU; a block is 16 tokens x 32 layers x 4 of 8 KV heads x 128 x 2 (K, V) x 2 B.
  const int64_t block_bytes = int64_t{16} * 32 * 4 * 128 * 2 * 2;
  EXPECT_EQ(plan.host_kv_bytes_per_gpu, int64_t{32} << 30);
  EXPECT_EQ(plan.num_host_kv_blocks, (int64_t{32} << 30) / block_bytes);
  EXPECT_EQ(plan.to_json().at("host_kv_tokens"), plan.num_host_kv_blocks * 16);
  EXPECT_THAT(plan.to_table(), HasSubstr("KV offload (--kv-offloading-size 64 GiB over 2 GPUs)"));
}

TEST(KvOffload, HostTierServesTheHistoriesTheGpuLost) {
  const RunOutcome with = run(config_of(scenario()));
  const RunOutcome without = run(config_of(scenario(), {"engine.kv_offloading_size_gib=null"}));
  ASSERT_EQ(with.result.summary.completed, 160u);
  ASSERT_EQ(without.result.summary.completed, 160u);
  const HostKvSummary& h = with.result.replicas.at(0).host_kv;
  EXPECT_GT(h.hit_tokens, 0);
  EXPECT_GT(h.stored_blocks, 0);
  EXPECT_GT(h.loaded_bytes, 0);
  EXPECT_EQ(without.result.replicas.at(0).host_kv.blocks, 0);
  // Histories served from the host count as cached prompt tokens, and are not recomputed.
  EXPECT_GT(with.result.summary.prefix_cache_hit_rate,
            without.result.summary.prefix_cache_hit_rate + 0.2);
  EXPECT_LT(with.result.summary.ttft.mean_s, 0.5 * without.result.summary.ttft.mean_s);
}

TEST(KvOffload, SegmentsSumToTtftWithTheLoadAsKvTransfer) {
  const RunOutcome r = run(config_of(scenario()));
  int loaded = 0;
  for (const RequestRecord& rec : r.records) {
    ASSERT_EQ(rec.status, RequestOutcome::kOk);
    const RequestSegments& s = rec.segments;
    EXPECT_NEAR(s.engine_queue_s + s.prefill_s + s.kv_transfer_s, rec.ttft_s(), 1e-9);
    EXPECT_GE(s.engine_queue_s, -1e-12);
    if (s.kv_transfer_s > 0) {
      ++loaded;
      // At least the latency and a block of 16 tokens over L4's 32 GB/s PCIe.
      EXPECT_GE(s.kv_transfer_s, 10e-6 + 16 * 131072 / 32e9 - 1e-12);
      EXPECT_GT(rec.cached_prompt_tokens, 0);
    }
  }
  EXPECT_GT(loaded, 10);
  for (const ReplicaSummary& rep : r.result.replicas) EXPECT_EQ(rep.kv_blocks_used_at_end, 0);
}

TEST(KvOffload, SameSeedSameFingerprint) {
  const RunOutcome a = run(config_of(scenario()));
  const RunOutcome b = run(config_of(scenario()));
  EXPECT_EQ(a.result.fingerprint, b.result.fingerprint);
  // A tier of 4,096 tokens evicts; the 16 GiB one never does.
  const RunOutcome c = run(config_of(scenario(), {"engine.kv_offloading_size_gib=0.5"}));
  EXPECT_NE(a.result.fingerprint, c.result.fingerprint);
}

TEST(KvOffload, ASlowerLinkCostsTtft) {
  const RunOutcome fast = run(config_of(scenario()));
  const RunOutcome slow = run(config_of(scenario(), {"engine.kv_offloading_bandwidth_GBps=0.5"}));
  EXPECT_GT(slow.result.summary.ttft.mean_s, fast.result.summary.ttft.mean_s);
  EXPECT_NEAR(slow.result.replicas.at(0).host_kv.bandwidth_Bps, 0.5e9, 1);
}

TEST(KvOffload, BadSettingsAreOneLineErrors) {
  const nlohmann::json j = scenario();
  EXPECT_THAT(error_of(j, {"engine.kv_offloading_backend=\"lmcache\""}),
              HasSubstr("kv_offloading_backend"));
  EXPECT_THAT(error_of(j, {"engine.kv_offloading_size_gib=0"}), HasSubstr("kv_offloading_size"));
  EXPECT_THAT(error_of(j, {"engine.kv_offloading_size_gib=-4"}), HasSubstr("kv_offloading_size"));
  EXPECT_THAT(
      error_of(j, {"engine.kv_offloading_size_gib=null", "engine.kv_offloading_bandwidth_GBps=10"}),
      HasSubstr("needs kv_offloading_size_gib"));
  EXPECT_THAT(error_of(j, {"engine.enable_prefix_caching=false"}), HasSubstr("prefix caching"));
  EXPECT_THAT(error_of(j, {"engine.kv_offloading_size_gib=0.000001"}),
              HasSubstr("holds no KV block"));
  EXPECT_THAT(error_of(j, {"engine.batching=\"static\""}), HasSubstr("static"));
  // A GPU file with NVLink but "pcie_gbs": 0 (with neither, the comm model refuses it first).
  SimulationConfig no_pcie = config_of(j, {"gpu=\"H100-SXM\""});
  no_pcie.gpu.pcie_Bps = 0;
  try {
    Simulation sim(no_pcie);
    ADD_FAILURE() << "a host link without bandwidth was accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("set engine.kv_offloading_bandwidth_GBps"));
  }
  no_pcie.engine.kv_offloading_bandwidth_Bps = 16e9;
  EXPECT_NO_THROW(Simulation{no_pcie});
}

}  // namespace
}  // namespace servesim
