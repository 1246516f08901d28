// The planner searches prefill/decode-disaggregated groups against aggregated replicas: the
// groups it enumerates, the deployment a group's evaluation simulates, the regimes where
// each family wins (the two bundled disagg scenarios), the serve lines and report fields of
// a disaggregated winner, and the one-line refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "models/config_error.h"
#include "plan/evaluator.h"
#include "plan/planner.h"
#include "sim/service/vllm_frontend.h"

namespace servesim {
namespace {

PlanOptions scenario_plan(const char* scenario, double target_qps) {
  PlanOptions o;
  o.scenario_path = std::string(SERVESIM_SOURCE_DIR "/configs/scenarios/") + scenario;
  o.target_load = target_qps;
  o.gpus = {"H100-SXM"};
  o.tp = {1, 2};
  o.requests = 300;
  o.top_k = 1;
  o.threads = 1;
  return o;
}

// A dense 8B model, short requests: fast to plan.
PlanOptions small_plan() {
  PlanOptions o;
  o.scenario = nlohmann::json::parse(R"({
    "model": "Llama-3.1-8B", "gpu": "H100-SXM",
    "engine": {"max_model_len": 4096},
    "workload": {"arrival": {"type": "poisson", "rate_qps": 1}, "prompt_tokens": 512,
                 "output_tokens": 32, "num_requests": 100},
    "slo": {"ttft_s": 2, "tpot_s": 0.1},
    "seed": 3
  })");
  o.target_load = 4;  // requests/s
  o.gpus = {"H100-SXM"};
  o.tp = {1};
  o.requests = 100;
  o.top_k = 1;
  o.threads = 1;
  return o;
}

// What an Evaluator is built from for a config-only test: the 8B model, short requests.
SimulationConfig small_base() {
  SimulationConfig base;
  base.model = Catalog().resolve_model("Llama-3.1-8B");
  base.workload.prompt_tokens = LengthDistribution::fixed(512);
  base.workload.output_tokens = LengthDistribution::fixed(32);
  base.service = vllm_service();
  return base;
}

// A group of `prefill` instances at TP prefill_tp and `decode` at TP decode_tp.
PlanCandidate group(int prefill, int prefill_tp, int decode, int decode_tp) {
  PlanCandidate c;
  c.prefill_instances = prefill;
  c.decode_instances = decode;
  c.prefill_tp = prefill_tp;
  c.tp = decode_tp;
  c.max_num_seqs = 64;
  c.prefill_engine.max_num_seqs = 64;
  return c;
}

const PlanCandidate* first_of_family(const PlanReport& r, bool disaggregated) {
  for (const PlanCandidate& c : r.candidates) {
    if (c.disaggregated() == disaggregated) return &c;
  }
  return nullptr;
}

TEST(DisaggregatedPlan, EnumeratesEveryRatioAndRoleTpAfterTheAggregatedCandidates) {
  PlanOptions o = small_plan();
  o.pd_ratios = {{{1, 1}, {2, 1}}};
  o.prefill_tp = {1, 2};
  o.decode_tp = {1};
  const PlanReport r = plan(o, Catalog());
  // TP 1 aggregated, then 1:1 and 2:1 with prefill TP 1 or 2 and decode TP 1.
  EXPECT_EQ(r.enumerated, 5u);
  int groups = 0;
  for (const PlanCandidate& c : r.candidates) {
    if (!c.disaggregated()) {
      EXPECT_EQ(c.gpus_per_replica, 1);
      continue;
    }
    ++groups;
    EXPECT_EQ(c.tp, 1);
    EXPECT_EQ(c.gpus_per_replica, c.prefill_instances * c.prefill_tp + c.decode_instances);
  }
  EXPECT_EQ(groups, 4);
  o.aggregated = false;
  EXPECT_EQ(plan(o, Catalog()).enumerated, 4u);
}

TEST(DisaggregatedPlan, AGroupEvaluatesAsItsRolesTimesTheGroups) {
  PlanOptions o = small_plan();
  o.slos = {parse_slo_target("ttft:p99=2")};
  const Evaluator evaluator(o, small_base(), nlohmann::json(),
                            nlohmann::json::parse(R"({"link": "ethernet"})"));
  PlanCandidate c = group(2, 1, 1, 4);
  c.prefill_engine.max_num_seqs = 16;
  const HardwareSpec gpu = Catalog().resolve_gpu("H100-SXM");
  const SimulationConfig cfg = evaluator.config(gpu, gpu, c, 3, PlanLoad::kQps, 2, 100);
  ASSERT_TRUE(cfg.disaggregation.enabled);
  EXPECT_EQ(cfg.disaggregation.prefill.instances, 6);
  EXPECT_EQ(cfg.disaggregation.decode.instances, 3);
  EXPECT_EQ(cfg.disaggregation.prefill.parallel.tp, 1);
  EXPECT_EQ(cfg.disaggregation.decode.parallel.tp, 4);
  EXPECT_EQ(cfg.disaggregation.decode.engine.max_num_seqs, 64);
  EXPECT_EQ(cfg.disaggregation.prefill.engine.max_num_seqs, 16);
  EXPECT_EQ(c.slots(), 2 * 16 + 64);
  EXPECT_EQ(cfg.disaggregation.prefill.gpu.name, "H100-SXM");
  EXPECT_EQ(cfg.disaggregation.kv_transfer.link, "ethernet");
  EXPECT_DOUBLE_EQ(cfg.disaggregation.kv_transfer.bandwidth_Bps, 12.5e9);
  EXPECT_EQ(cfg.parallel.dp, 1);
  EXPECT_EQ(cfg.disaggregation.total_gpus(), 18);
  // Each decode instance is a vllm serve of its own, with its own API server: the simulation
  // gives each its own (Disaggregation.EachDecodeInstanceHasItsOwnApiServer), so the planner
  // does not multiply them.
  EXPECT_EQ(cfg.service.frontend.station.workers, 1);
  c.prefill_instances = 0;  // the same candidate aggregated: 3 data-parallel replicas
  const SimulationConfig aggregated = evaluator.config(gpu, gpu, c, 3, PlanLoad::kQps, 2, 100);
  EXPECT_FALSE(aggregated.disaggregation.enabled);
  EXPECT_EQ(aggregated.parallel.dp, 3);
  // The planner's replicas are 3 servers behind a load balancer, not one vllm serve
  // --data-parallel-size 3 with one API server.
  EXPECT_EQ(aggregated.service.frontend.station.workers, 3);
  EXPECT_EQ(
      evaluator.config(gpu, gpu, c, 1, PlanLoad::kQps, 2, 100).service.frontend.station.workers, 1);
}

// docs/disaggregation.md's winning regime: 8,000-token prompts under a 10 ms TPOT SLO. An
// aggregated replica's decodes share steps with those prefills; a group's do not.
TEST(DisaggregatedPlan, LongPromptsUnderATightTpotPickAGroupAndSayWhy) {
  const PlanReport r = plan(scenario_plan("disagg-long-prompts.json", 3), Catalog());
  ASSERT_TRUE(r.feasible()) << r.to_table(10);
  const PlanCandidate& w = r.candidates.front();
  ASSERT_TRUE(w.disaggregated()) << r.to_table(10);
  EXPECT_TRUE(w.verified);
  const PlanCandidate* aggregated = first_of_family(r, false);
  ASSERT_NE(aggregated, nullptr);
  EXPECT_GT(aggregated->cost_per_hour, w.cost_per_hour);
  EXPECT_EQ(aggregated->limit, "SLO tpot:p99") << aggregated->reason;
  const std::vector<std::string> commands = r.vllm_commands();
  ASSERT_EQ(commands.size(), 2u);
  EXPECT_NE(commands[0].find("--tensor-parallel-size " + std::to_string(w.prefill_tp)),
            std::string::npos);
  EXPECT_NE(commands[1].find("--tensor-parallel-size " + std::to_string(w.tp)), std::string::npos);
  for (const std::string& cmd : commands) {
    EXPECT_NE(
        cmd.find(R"(--kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}')"),
        std::string::npos)
        << cmd;
  }
  const std::string table = r.to_table(10);
  for (const char* s : {"winner: 1 group of 2P TP1 + 1D TP", "  prefill: vllm serve",
                        "  decode:  vllm serve", "KV over infiniband", "best aggregated: ",
                        "more)\n    it sustains", "\n    the winner sustains"}) {
    EXPECT_NE(table.find(s), std::string::npos) << s << "\n" << table;
  }
  const nlohmann::json j = r.to_json();
  EXPECT_FALSE(j.contains("vllm_command"));
  EXPECT_EQ(j["vllm_prefill_command"], commands[0]);
  EXPECT_EQ(j["vllm_decode_command"], commands[1]);
  EXPECT_EQ(j["kv_transfer"]["connector"], "NixlConnector");
  EXPECT_EQ(j["candidates"][0]["disaggregation"]["prefill_instances"], w.prefill_instances);
  EXPECT_EQ(j["candidates"][0]["deployment"], w.shape());
  EXPECT_NE(r.to_csv().find("," + w.shape() + ",,0\n"), std::string::npos);
}

// The losing regime: 256-token prompts leave little interference to remove, and a group
// needs two GPUs where one aggregated replica serves the load.
TEST(DisaggregatedPlan, ShortPromptsPickAggregatedAndNameTheBestGroup) {
  const PlanReport r = plan(scenario_plan("disagg-short-prompts.json", 20), Catalog());
  ASSERT_TRUE(r.feasible()) << r.to_table(10);
  EXPECT_FALSE(r.candidates.front().disaggregated()) << r.to_table(10);
  ASSERT_NE(first_of_family(r, true), nullptr);
  EXPECT_EQ(r.vllm_commands().size(), 1u);
  const std::string table = r.to_table(10);
  EXPECT_NE(table.find("best disaggregated: 1 group of 1P TP1 + 1D TP1"), std::string::npos)
      << table;
}

TEST(DisaggregatedPlan, AScenarioBlockGivesTheRatioAndNoneSearchesAggregatedOnly) {
  PlanOptions o = scenario_plan("disagg-short-prompts.json", 4);
  o.tp = {1};
  PlanReport r = plan(o, Catalog());
  EXPECT_EQ(r.enumerated, 2u);  // TP 1, and the scenario's 1P1D
  ASSERT_NE(first_of_family(r, true), nullptr);
  EXPECT_EQ(first_of_family(r, true)->prefill_instances, 1);
  o.pd_ratios = std::vector<PdRatio>{};
  r = plan(o, Catalog());
  EXPECT_EQ(r.enumerated, 1u);
  EXPECT_EQ(first_of_family(r, true), nullptr);
}

TEST(DisaggregatedPlan, RolesKeepTheirOwnMaxNumSeqsUnlessTheOptionsListValues) {
  PlanOptions o = small_plan();
  o.scenario["disaggregation"] = nlohmann::json::parse(
      R"({"prefill": {"instances": 2, "engine": {"max_num_seqs": 8}},
          "decode": {"instances": 1, "engine": {"max_num_seqs": 32}}})");
  PlanReport r = plan(o, Catalog());
  const PlanCandidate* group = first_of_family(r, true);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->prefill_instances, 2);
  EXPECT_EQ(group->max_num_seqs, 32);
  EXPECT_EQ(group->prefill_engine.max_num_seqs, 8);
  EXPECT_EQ(group->slots(), 2 * 8 + 32);
  o.max_num_seqs = {16};
  r = plan(o, Catalog());
  group = first_of_family(r, true);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->max_num_seqs, 16);
  EXPECT_EQ(group->prefill_engine.max_num_seqs, 16);
}

TEST(DisaggregatedPlan, AGroupWithAHostKvTierIsSearchedAndServedThroughAMultiConnector) {
  PlanOptions o = small_plan();
  o.pd_ratios = {{{1, 1}}};
  o.aggregated = false;
  o.kv_offloading_sizes = {0, 16};
  PlanReport r = plan(o, Catalog());
  ASSERT_EQ(r.candidates.size(), 2u);
  std::set<std::string> tiers;
  for (const PlanCandidate& c : r.candidates) {
    EXPECT_NE(c.status, CandidateStatus::kInvalid) << c.reason;
    tiers.insert(c.engine.kv_offloading_size_gib ? "16" : "none");
    EXPECT_EQ(c.prefill_engine.kv_offloading_size_gib, c.engine.kv_offloading_size_gib);
  }
  EXPECT_EQ(tiers, (std::set<std::string>{"16", "none"}));
  // --kv-offloading-size would replace the NixlConnector: both connectors in one MultiConnector.
  o.kv_offloading_sizes = {16};
  r = plan(o, Catalog());
  ASSERT_TRUE(r.feasible()) << r.to_table(3);
  const std::vector<std::string> cmds = r.vllm_commands();
  ASSERT_EQ(cmds.size(), 2u);
  for (const std::string& cmd : cmds) {
    EXPECT_EQ(cmd.find("--kv-offloading-size"), std::string::npos) << cmd;
    EXPECT_NE(
        cmd.find(R"(--kv-transfer-config '{"kv_connector":"MultiConnector",)"
                 R"("kv_connector_extra_config":{"connectors":[{"kv_connector":"NixlConnector",)"
                 R"("kv_role":"kv_both"},{"kv_connector":"OffloadingConnector",)"
                 R"("kv_connector_extra_config":{"cpu_bytes_to_use":17179869184},)"
                 R"("kv_role":"kv_both"}]},"kv_role":"kv_both"}')"),
        std::string::npos)
        << cmd;
  }
  EXPECT_NE(r.to_table(3).find("+16 GiB host KV"), std::string::npos) << r.to_table(3);
}

TEST(DisaggregatedPlan, AGroupsEvaluationRunsEachRoleWithItsCandidatesHostTier) {
  PlanOptions o = small_plan();
  const Evaluator evaluator(o, small_base(), nlohmann::json(), nlohmann::json());
  PlanCandidate c = group(1, 1, 2, 1);
  c.prefill_engine.kv_offloading_size_gib = 32;
  c.prefill_engine.kv_offloading_bandwidth_Bps = 20e9;
  const HardwareSpec gpu = Catalog().resolve_gpu("H100-SXM");
  const SimulationConfig cfg = evaluator.config(gpu, gpu, c, 1, PlanLoad::kQps, 2, 100);
  EXPECT_EQ(cfg.disaggregation.prefill.engine.kv_offloading_size_gib, 32);
  EXPECT_EQ(cfg.disaggregation.prefill.engine.kv_offloading_bandwidth_Bps, 20e9);
  EXPECT_FALSE(cfg.disaggregation.decode.engine.kv_offloading_size_gib);
  c.engine.kv_offloading_size_gib = 16;
  EXPECT_EQ(evaluator.config(gpu, gpu, c, 1, PlanLoad::kQps, 2, 100)
                .disaggregation.decode.engine.kv_offloading_size_gib,
            16);
}

TEST(DisaggregatedPlan, GroupsTheSimulatorRefusesAreInvalidWithTheReason) {
  PlanOptions o;
  PlanReport r;
  // NVLink between the roles on a GPU without it: the scenario's link is checked per GPU.
  o = small_plan();
  o.scenario["disaggregation"] = nlohmann::json::parse(
      R"({"prefill": {"instances": 1}, "decode": {"instances": 1},
          "kv_transfer": {"link": "nvlink"}})");
  o.gpus = {"H100-SXM", "L4"};
  r = plan(o, Catalog());
  int l4_groups = 0;
  for (const PlanCandidate& c : r.candidates) {
    if (!c.disaggregated()) continue;
    if (c.gpu == "H100-SXM") {
      EXPECT_NE(c.status, CandidateStatus::kInvalid) << c.reason;
      continue;
    }
    ++l4_groups;
    EXPECT_EQ(c.status, CandidateStatus::kInvalid);
    EXPECT_NE(c.reason.find("disaggregation.kv_transfer: link"), std::string::npos) << c.reason;
  }
  EXPECT_EQ(l4_groups, 1);
}

// Each role on its own GPU type: every prefill GPU with every decode GPU, after the
// aggregated candidates, priced by the GPUs each role holds.
TEST(DisaggregatedPlan, RolesOnTwoGpuTypesArePairedAndPricedPerRole) {
  PlanOptions o = small_plan();
  o.pd_ratios = {{{2, 1}}};
  o.prefill_gpus = {"L40S", "H100-SXM"};
  o.decode_gpus = {"H200"};
  o.search_all = true;
  const PlanReport r = plan(o, Catalog());
  ASSERT_EQ(r.enumerated, 3u);  // one aggregated H100-SXM, two groups
  int groups = 0;
  for (const PlanCandidate& c : r.candidates) {
    if (!c.disaggregated()) {
      EXPECT_EQ(c.gpu, "H100-SXM");
      continue;
    }
    ++groups;
    EXPECT_EQ(c.gpu, "H200");
    const Catalog catalog;
    const double prefill_price = catalog.resolve_gpu(c.prefill_gpu).price_per_hour_usd;
    const double decode_price = catalog.resolve_gpu("H200").price_per_hour_usd;
    EXPECT_NEAR(c.price_per_gpu_hour, (2 * prefill_price + decode_price) / 3, 1e-12);
    EXPECT_NEAR(c.cost_per_hour, c.replicas * (2 * prefill_price + decode_price), 1e-9);
    EXPECT_EQ(c.shape(), "2P " + c.prefill_gpu + " TP1 + 1D H200 TP1");
  }
  EXPECT_EQ(groups, 2);
  const nlohmann::json j = r.to_json();
  std::set<std::string> prefill_gpus;
  for (const nlohmann::json& c : j["candidates"]) {
    if (c.contains("disaggregation")) {
      prefill_gpus.insert(c["disaggregation"]["prefill_gpu"].get<std::string>());
      EXPECT_EQ(c["disaggregation"]["decode_gpu"], "H200");
    }
  }
  EXPECT_EQ(prefill_gpus, (std::set<std::string>{"L40S", "H100-SXM"}));
  // Only --decode-gpus: the prefill role takes the GPU axis.
  o.prefill_gpus.clear();
  o.decode_gpus = {"H200", "L40S"};
  o.aggregated = false;
  EXPECT_EQ(plan(o, Catalog()).enumerated, 2u);
}

TEST(DisaggregatedPlan, AGroupOfTwoGpuTypesRunsEachRoleOnItsOwnAndJoinsThemByNetwork) {
  const PlanOptions o = small_plan();
  const SimulationConfig base = small_base();
  const Catalog catalog;
  const HardwareSpec h200 = catalog.resolve_gpu("H200");
  const HardwareSpec l40s = catalog.resolve_gpu("L40S");
  PlanCandidate c = group(1, 1, 1, 1);
  c.gpu = "H200";
  c.prefill_gpu = "L40S";
  const Evaluator pcie(o, base, nlohmann::json(), nlohmann::json::parse(R"({"link": "pcie"})"));
  const SimulationConfig cfg = pcie.config(h200, l40s, c, 1, PlanLoad::kQps, 2, 100);
  EXPECT_EQ(cfg.disaggregation.prefill.gpu.name, "L40S");
  EXPECT_EQ(cfg.disaggregation.decode.gpu.name, "H200");
  // A PCIe preset between two GPU types runs at the slower side's figure.
  EXPECT_DOUBLE_EQ(cfg.disaggregation.kv_transfer.bandwidth_Bps,
                   std::min(h200.pcie_Bps, l40s.pcie_Bps));
  const Evaluator nvlink(o, base, nlohmann::json(), nlohmann::json::parse(R"({"link": "nvlink"})"));
  EXPECT_NO_THROW(nvlink.kv_transfer(h200, h200));
  try {
    nvlink.kv_transfer(catalog.resolve_gpu("H100-SXM"), h200);
    ADD_FAILURE() << "nvlink between two GPU types";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("not prefill on H100-SXM and decode on H200"),
              std::string::npos)
        << e.what();
  }
}

TEST(DisaggregatedPlan, BadOptionsAreOneLineErrors) {
  PlanOptions o = small_plan();
  o.aggregated = false;
  EXPECT_THROW(plan(o, Catalog()), ConfigError);  // no group to search
  o = small_plan();
  o.prefill_tp = {2};
  EXPECT_THROW(plan(o, Catalog()), ConfigError);  // role TP without --pd
  o = small_plan();
  o.pd_ratios = {{{0, 1}}};
  EXPECT_THROW(plan(o, Catalog()), ConfigError);
  o = small_plan();
  o.pd_ratios = {{{1, 1}}};
  o.decode_tp = {0};
  EXPECT_THROW(plan(o, Catalog()), ConfigError);
  o = small_plan();
  o.prefill_gpus = {"L40S"};
  EXPECT_THROW(plan(o, Catalog()), ConfigError);  // role GPUs without --pd
  o.pd_ratios = {{{1, 1}}};
  o.prefill_gpus = {"NoSuchGPU"};
  try {
    plan(o, Catalog());
    ADD_FAILURE() << "an unknown prefill GPU";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--prefill-gpus: unknown GPU 'NoSuchGPU'", 0), 0u)
        << e.what();
  }
}

}  // namespace
}  // namespace servesim
