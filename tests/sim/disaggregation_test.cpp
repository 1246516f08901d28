// Prefill/decode disaggregation: the KV transfer's price against hand computation, the link's
// queue, the scenario block's checks, and whole runs — every request served once, segments
// that add up to its TTFT, no block left behind on either side, determinism, and the physics
// that makes disaggregation worth asking about (decodes no longer share steps with prefills).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/catalog.h"
#include "models/config_error.h"
#include "sim/run/simulation.h"
#include "sim/scenario/scenario.h"
#include "sim/serving/kv_transfer_link.h"

namespace servesim {
namespace {

using ::testing::HasSubstr;

nlohmann::json scenario() {
  return nlohmann::json::parse(R"({
    "model": "Llama-3.1-8B",
    "gpu": "H100-SXM",
    "engine": {"max_model_len": 8192},
    "service": "none",
    "disaggregation": {
      "prefill": {"instances": 1},
      "decode": {"instances": 1},
      "kv_transfer": {"link": "infiniband"}
    },
    "workload": {"arrival": {"type": "poisson", "rate_qps": 2}, "prompt_tokens": 2000,
                 "output_tokens": 64, "num_requests": 120},
    "seed": 5
  })");
}

SimulationConfig config_of(nlohmann::json j, const std::vector<std::string>& overrides = {}) {
  apply_overrides(j, overrides);
  return parse_scenario(j, "", "test", Catalog()).config;
}

class Records final : public Observer {
 public:
  void on_request_done(const RequestRecord& r) override { records.push_back(r); }
  std::vector<RequestRecord> records;
};

struct RunOutcome {
  SimulationResult result;
  std::vector<RequestRecord> records;
  double kv_bytes_per_token = 0;  // one decode GPU's
};

RunOutcome run(const SimulationConfig& c) {
  Simulation sim(c);
  Records observer;
  RunOutcome r;
  r.result = sim.run(observer);
  r.records = std::move(observer.records);
  r.kv_bytes_per_token = sim.memory_plan().kv_bytes_per_token;
  return r;
}

std::string error_of(const nlohmann::json& j) {
  try {
    Simulation sim(config_of(j));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(KvTransferSpec, TimeIsLatencyPlusTheBusierSidesBytesOverItsLink) {
  KvTransferSpec s;
  s.bandwidth_Bps = 50e9;
  s.latency_s = 10e-6;
  // 1,000 tokens of Llama-3.1-8B's bf16 KV (32 layers x 8 KV heads x 128 x K,V x 2 bytes =
  // 131,072 B/token) on one prefill GPU, sent to a TP 2 decode instance (65,536 B per GPU):
  // the prefill GPU's NIC moves 131 MB.
  EXPECT_NEAR(s.transfer_s(1000, 131072, 65536), 10e-6 + 1000 * 131072 / 50e9, 1e-12);
  EXPECT_NEAR(s.transfer_s(0, 131072, 65536), 10e-6, 1e-15);
}

TEST(KvTransferSpec, PresetsFillTheLinkAndKeysOverrideThem) {
  const HardwareSpec gpu = Catalog().resolve_gpu("H100-SXM");
  const KvTransferSpec ib = KvTransferSpec::from_json({{"link", "infiniband"}}, "kv", gpu);
  EXPECT_DOUBLE_EQ(ib.bandwidth_Bps, 50e9);
  const KvTransferSpec nv = KvTransferSpec::from_json({{"link", "nvlink"}}, "kv", gpu);
  EXPECT_DOUBLE_EQ(nv.bandwidth_Bps, gpu.nvlink_Bps / 2);
  const KvTransferSpec own = KvTransferSpec::from_json({{"link", "ethernet"},
                                                        {"bandwidth_GBps", 25},
                                                        {"latency_us", 40},
                                                        {"handoff_ms", 2},
                                                        {"overlap", "layerwise"}},
                                                       "kv", gpu);
  EXPECT_DOUBLE_EQ(own.bandwidth_Bps, 25e9);
  EXPECT_DOUBLE_EQ(own.latency_s, 40e-6);
  EXPECT_DOUBLE_EQ(own.handoff_s, 2e-3);
  EXPECT_EQ(own.overlap, KvTransferOverlap::kLayerwise);
}

// Roles on two GPU types: a peer-copy preset runs at the slower side's figure, and NVLink,
// whose domain is one GPU type, is refused — in a scenario as in the planner.
TEST(KvTransferSpec, RolesOnTwoGpuTypesTakeTheSlowerLinkAndNoNvlink) {
  const Catalog catalog;
  const HardwareSpec h100 = catalog.resolve_gpu("H100-SXM");
  const HardwareSpec l40s = catalog.resolve_gpu("L40S");
  const KvTransferSpec pcie = KvTransferSpec::from_json({{"link", "pcie"}}, "kv", l40s, h100);
  EXPECT_DOUBLE_EQ(pcie.bandwidth_Bps, std::min(l40s.pcie_Bps, h100.pcie_Bps));
  EXPECT_DOUBLE_EQ(
      KvTransferSpec::from_json({{"link", "infiniband"}}, "kv", l40s, h100).bandwidth_Bps, 50e9);
  nlohmann::json j = nlohmann::json::parse(R"({
    "model": "Llama-3.1-8B", "gpu": "H100-SXM",
    "disaggregation": {"prefill": {"instances": 1, "gpu": "H200"}, "decode": {"instances": 1},
                       "kv_transfer": {"link": "nvlink"}},
    "workload": {"arrival": {"type": "poisson", "rate_qps": 1}, "prompt_tokens": 64,
                 "output_tokens": 8, "num_requests": 4}
  })");
  try {
    parse_scenario(j, "", "s.json", catalog);
    ADD_FAILURE() << "nvlink between H200 and H100-SXM";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("s.json: disaggregation.kv_transfer: link"));
    EXPECT_THAT(e.what(), HasSubstr("not prefill on H200 and decode on H100-SXM"));
  }
  j["disaggregation"]["prefill"].erase("gpu");  // one GPU type: NVLink joins them
  EXPECT_TRUE(parse_scenario(j, "", "s.json", catalog).config.disaggregation.enabled);
}

TEST(KvTransferSpec, BadKeysAreOneLineErrors) {
  const HardwareSpec gpu = Catalog().resolve_gpu("H100-SXM");
  auto error = [&](const nlohmann::json& j) {
    try {
      KvTransferSpec::from_json(j, "kv_transfer", gpu);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_THAT(error({{"link", "carrier-pigeon"}}), HasSubstr("infiniband, ethernet"));
  EXPECT_THAT(error({{"link", "custom"}}), HasSubstr("bandwidth_GBps"));
  EXPECT_THAT(error({{"bandwidth_GBps", -1}}), HasSubstr("bandwidth_GBps"));
  EXPECT_THAT(error({{"latency_us", -1}}), HasSubstr("latency_us"));
  EXPECT_THAT(error({{"overlap", "sometimes"}}), HasSubstr("layerwise"));
  EXPECT_THAT(error({{"bandwith_GBps", 1}}), HasSubstr("bandwith_GBps"));
}

TEST(KvTransferLink, TransfersQueueForTheLink) {
  KvTransferSpec spec;
  KvTransferLink link;
  EXPECT_DOUBLE_EQ(link.start(1.0, 0.5, spec, 0.0, 32), 1.5);
  EXPECT_DOUBLE_EQ(link.start(1.2, 0.5, spec, 0.0, 32), 2.0);  // waits for the first
  EXPECT_DOUBLE_EQ(link.start(3.0, 0.5, spec, 0.0, 32), 3.5);  // the link was free again
  EXPECT_DOUBLE_EQ(link.busy_s(), 1.5);
  EXPECT_EQ(link.transfers(), 3);
}

TEST(KvTransferLink, LayerwiseLeavesWhatThePrefillDidNotCover) {
  KvTransferSpec spec;
  spec.latency_s = 0;
  spec.overlap = KvTransferOverlap::kLayerwise;
  KvTransferLink link;
  // A 0.32 s transfer over 32 layers pushed during a prefill that began 1 s earlier: only the
  // last layer's 10 ms remains.
  EXPECT_NEAR(link.start(1.0, 0.32, spec, 0.0, 32), 1.01, 1e-12);
  // Begun just now: the link still has nearly all of it to move.
  KvTransferLink fresh;
  EXPECT_NEAR(fresh.start(1.0, 0.32, spec, 0.9, 32), 1.22, 1e-12);
}

TEST(Disaggregation, EveryRequestIsServedOnceWithSegmentsSummingToItsTtft) {
  const RunOutcome r = run(config_of(scenario()));
  EXPECT_EQ(r.result.summary.completed, 120u);
  EXPECT_EQ(r.result.summary.output_tokens, 120u * 64);
  ASSERT_EQ(r.records.size(), 120u);
  for (const RequestRecord& rec : r.records) {
    ASSERT_EQ(rec.status, RequestOutcome::kOk);
    EXPECT_EQ(rec.output_tokens, 64);
    const RequestSegments& s = rec.segments;
    EXPECT_NEAR(s.engine_queue_s + s.prefill_s + s.decode_queue_s + s.kv_transfer_s, rec.ttft_s(),
                1e-9);
    EXPECT_NEAR(rec.ttft_s() + s.decode_s, rec.e2e_s(), 1e-9);
    // The hand-off (1 ms by default) always precedes the decode instance.
    EXPECT_GE(s.decode_queue_s, 1e-3 - 1e-12);
    EXPECT_GT(s.kv_transfer_s, 0);
    EXPECT_GE(rec.replica, 1);  // the decode instance served it
  }
  ASSERT_EQ(r.result.replicas.size(), 2u);
  EXPECT_EQ(r.result.replicas[0].role, ReplicaRole::kPrefill);
  EXPECT_EQ(r.result.replicas[1].role, ReplicaRole::kDecode);
  for (const ReplicaSummary& rep : r.result.replicas) EXPECT_EQ(rep.kv_blocks_used_at_end, 0);
}

TEST(Disaggregation, AnUncontendedTransferTakesWhatTheLinkSays) {
  // One request at a time: no queue for the link, so the transfer is latency + bytes / bw.
  const RunOutcome r =
      run(config_of(scenario(), {"workload.arrival.rate_qps=0.2", "workload.num_requests=5"}));
  ASSERT_EQ(r.records.size(), 5u);
  const double expected_s = 10e-6 + 2000 * r.kv_bytes_per_token / 50e9;
  for (const RequestRecord& rec : r.records) {
    EXPECT_NEAR(rec.segments.kv_transfer_s, expected_s, 1e-9);
  }
}

TEST(Disaggregation, SameSeedSameFingerprint) {
  const RunOutcome a = run(config_of(scenario()));
  const RunOutcome b = run(config_of(scenario()));
  EXPECT_EQ(a.result.fingerprint, b.result.fingerprint);
  EXPECT_EQ(a.result.summary.ttft.p99_s, b.result.summary.ttft.p99_s);
}

TEST(Disaggregation, DecodesFreeOfPrefillsHaveTheLowerTpot) {
  // Long prompts at a steady rate: aggregated, every prefill chunk lengthens the steps the
  // running decodes share with it; disaggregated, the decode instance runs decodes only.
  // Same two GPUs either way.
  const std::vector<std::string> load = {"workload.arrival.rate_qps=4",
                                         "workload.prompt_tokens=4000",
                                         "workload.output_tokens=256", "workload.num_requests=200"};
  const RunOutcome split = run(config_of(scenario(), load));
  nlohmann::json aggregated = scenario();
  aggregated.erase("disaggregation");
  aggregated["parallel"] = {{"data_parallel_size", 2}};
  const RunOutcome together = run(config_of(aggregated, load));
  EXPECT_LT(split.result.summary.tpot.mean_s, 0.9 * together.result.summary.tpot.mean_s);
}

TEST(Disaggregation, DecodeSideFullOfBlocksShowsAsDecodeQueue) {
  // A decode instance with room for a few sequences only: requests wait there for blocks,
  // which the decode_queue segment shows while the transfers themselves stay short.
  const RunOutcome r =
      run(config_of(scenario(), {"disaggregation.decode.engine.num_gpu_blocks_override=1200",
                                 "workload.arrival.rate_qps=8", "workload.output_tokens=512"}));
  double queue_s = 0;
  double transfer_s = 0;
  for (const RequestRecord& rec : r.records) {
    queue_s += rec.segments.decode_queue_s;
    transfer_s += rec.segments.kv_transfer_s;
  }
  EXPECT_GT(queue_s, 10 * transfer_s);
  for (const ReplicaSummary& rep : r.result.replicas) EXPECT_EQ(rep.kv_blocks_used_at_end, 0);
}

// A decode instance running one sequence among loaded prompts that hold the rest of its
// blocks: the running request runs out of blocks and preempts itself, and that step schedules
// nothing (a step that preempts leaves the waiting queue alone). The replica must schedule
// again as vLLM's engine core does; it used to wait for an event that never came, ending the
// run with 1 of 20 requests done (found by the invariants' 5,000-scenario run, seed 3073).
TEST(Disaggregation, ADecodeInstanceThatPreemptsItsOnlyRequestGoesOn) {
  // Before the fix, the decode instance stopped scheduling after the step that preempted its
  // request: the run sampled for ever (now it ends with SimulationStalled, 1 of 20 finished).
  const RunOutcome r = run(config_of(
      scenario(),
      {"engine.max_model_len=4096", "disaggregation.decode.engine.max_num_seqs=1",
       "disaggregation.decode.engine.num_gpu_blocks_override=256",
       R"(workload.arrival={"type": "closed", "clients": 11})", "workload.prompt_tokens=512",
       "workload.output_tokens=3400", "workload.num_requests=20"}));
  EXPECT_EQ(r.result.summary.completed, 20u);
  EXPECT_GT(r.result.replicas.at(1).preemptions, 0u);
  for (const ReplicaSummary& rep : r.result.replicas) EXPECT_EQ(rep.kv_blocks_used_at_end, 0);
}

// The step that preempted a decode instance's only running request also started a KV load
// (a prompt handed over from a prefill instance); the replica then scheduled again and kept
// only the second schedule's loads, so that load's bytes were never moved and its request
// waited for them for ever (invariants seed 101612, stopped by SimulationStalled: 36 of 47
// requests left, 1 "loading KV" with no transfer under way). The scenario is that seed's.
TEST(Disaggregation, AKvLoadStartedByAPreemptingStepIsCarriedOut) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "model": "Qwen2.5-7B", "gpu": "A100-80GB-SXM",
    "engine": {"batching": "prefill_first", "enable_chunked_prefill": false,
               "enable_prefix_caching": true, "kv_offloading_size_gib": 2.0,
               "max_model_len": 4096, "max_num_seqs": 2, "num_gpu_blocks_override": 256},
    "disaggregation": {"prefill": {"instances": 2, "tensor_parallel_size": 2},
                       "decode": {"instances": 1}, "decode_router": "least_kv",
                       "prefill_router": "least_outstanding",
                       "kv_transfer": {"link": "pcie", "overlap": "after_prefill"}},
    "metrics": {"sample_interval_s": 0},
    "workload": {"num_requests": 47, "trace": {"time_scale": 1.0}},
    "seed": 140047760})");
  j["workload"]["trace"]["path"] =
      std::string(SERVESIM_SOURCE_DIR) + "/configs/workloads/traces/splitwise_code.csv";
  const RunOutcome r = run(config_of(j));
  EXPECT_EQ(r.result.summary.completed + r.result.summary.rejected, 47u);
  EXPECT_GT(r.result.replicas.at(2).preemptions, 0u);
  for (const ReplicaSummary& rep : r.result.replicas) EXPECT_EQ(rep.kv_blocks_used_at_end, 0);
}

TEST(Disaggregation, ClientTimeoutsAbortOnBothSidesAndLeaveNoBlocks) {
  nlohmann::json j = scenario();
  j["service"] = nlohmann::json::parse(R"({"client": {"timeout_s": 1.0}})");
  const RunOutcome r = run(config_of(j, {"workload.arrival.rate_qps=20"}));
  EXPECT_GT(r.result.summary.timed_out, 0u);
  EXPECT_GT(r.result.summary.completed, 0u);
  for (const ReplicaSummary& rep : r.result.replicas) EXPECT_EQ(rep.kv_blocks_used_at_end, 0);
}

TEST(Disaggregation, EachDecodeInstanceHasItsOwnApiServer) {
  // Each decode instance is a `vllm serve` of its own that streams its answers, so three of
  // them have three API servers: at 20 ms a request one process admits 50 requests/s, three
  // the 100/s offered (short requests, so the GPUs are not what limits them).
  nlohmann::json j = scenario();
  j["service"] = nlohmann::json::parse(R"({"frontend": {"request_s": 0.02}})");
  const std::vector<std::string> load = {
      "workload.arrival.rate_qps=100", "workload.prompt_tokens=64", "workload.output_tokens=16",
      "workload.num_requests=3000", "disaggregation.prefill.instances=2"};
  const RunOutcome one = run(config_of(j, load));
  ASSERT_EQ(one.result.stations.size(), 1u);
  EXPECT_EQ(one.result.stations[0].name, "frontend");
  EXPECT_GT(one.result.stations[0].utilisation, 0.97);
  EXPECT_LT(one.result.summary.request_throughput, 50.0);  // and its streaming takes some more
  std::vector<std::string> three_decodes = load;
  three_decodes.push_back("disaggregation.decode.instances=3");
  const RunOutcome three = run(config_of(j, three_decodes));
  ASSERT_EQ(three.result.stations.size(), 3u);
  EXPECT_EQ(three.result.stations[2].name, "frontend#2");
  for (const StationStats& s : three.result.stations) EXPECT_LT(s.utilisation, 0.8);
  EXPECT_NEAR(three.result.summary.request_throughput, 100.0, 6.0);
}

TEST(Disaggregation, BadDeploymentsAreOneLineErrors) {
  nlohmann::json no_decode = scenario();
  no_decode["disaggregation"].erase("decode");
  EXPECT_THAT(error_of(no_decode), HasSubstr("disaggregation: decode is required"));
  nlohmann::json zero = scenario();
  zero["disaggregation"]["decode"]["instances"] = 0;
  EXPECT_THAT(error_of(zero), HasSubstr("instances"));
  nlohmann::json dp = scenario();
  dp["parallel"] = {{"data_parallel_size", 2}};
  EXPECT_THAT(error_of(dp), HasSubstr("disaggregation.prefill.instances"));
  nlohmann::json cluster = scenario();
  cluster["cluster"] = {{"router", "random"}};
  EXPECT_THAT(error_of(cluster), HasSubstr("decode_router"));
  nlohmann::json static_batching = scenario();
  static_batching["engine"]["batching"] = "static";
  EXPECT_THAT(error_of(static_batching), HasSubstr("continuous"));
  nlohmann::json role_wide = scenario();
  role_wide["disaggregation"]["prefill"]["engine"] = {{"batching", "prefill_first"}};
  EXPECT_THAT(error_of(role_wide), HasSubstr("top-level engine block"));
  nlohmann::json tp = scenario();
  tp["disaggregation"]["decode"]["tensor_parallel_size"] = 3;
  EXPECT_THAT(error_of(tp), HasSubstr("disaggregation.decode"));
  nlohmann::json typo = scenario();
  typo["disaggregation"]["prefil"] = nlohmann::json::object();
  EXPECT_THAT(error_of(typo), HasSubstr("prefil"));
}

TEST(Disaggregation, RolesTakeTheirOwnEngineFlags) {
  Simulation sim(
      config_of(scenario(), {"disaggregation.prefill.engine.max_num_batched_tokens=16384",
                             "disaggregation.decode.engine.max_num_seqs=64"}));
  EXPECT_EQ(sim.prefill_scheduler_config().max_num_batched_tokens, 16384);
  EXPECT_EQ(sim.scheduler_config().max_num_seqs, 64);
  EXPECT_NE(sim.prefill_scheduler_config().max_num_seqs, 64);
  EXPECT_EQ(sim.config().metrics.num_gpus, 2);
}

}  // namespace
}  // namespace servesim
