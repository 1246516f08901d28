// The capacity planner on small spaces whose answer is known from the GPUs' capacities:
// the winner, infeasible targets and their explanation, thread-count independence, and
// one-line errors for bad inputs.
#include "plan/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>

#include "models/catalog.h"
#include "models/config_error.h"
#include "plan/evaluator.h"
#include "thread_ranks.h"

namespace servesim {
namespace {

const std::string kQuickstart = SERVESIM_SOURCE_DIR "/configs/scenarios/quickstart.json";

PlanOptions small_plan() {
  PlanOptions o;
  o.scenario_path = kQuickstart;  // Llama-2-7B, 512-token prompts, 128-token answers
  o.target_load = 20;             // requests/s
  o.slos = {parse_slo_target("ttft:p99=0.5"), parse_slo_target("tpot:p99=0.05")};
  o.gpus = {"A100-80GB", "H100"};
  o.tp = {1};
  o.requests = 300;
  o.top_k = 2;
  o.threads = 1;
  return o;
}

TEST(SloTarget, ParsesMetricPercentileAndUnits) {
  const SloTarget a = parse_slo_target("ttft:p99=0.5");
  EXPECT_EQ(a.metric, SloMetric::kTtft);
  EXPECT_EQ(a.percentile, 99);
  EXPECT_DOUBLE_EQ(a.limit_s, 0.5);
  const SloTarget b = parse_slo_target("itl:p90=40ms");
  EXPECT_EQ(b.metric, SloMetric::kItl);
  EXPECT_DOUBLE_EQ(b.limit_s, 0.04);
  EXPECT_EQ(b.name(), "itl:p90");
  EXPECT_EQ(parse_slo_target("e2e:p50=12s").limit_s, 12);
}

TEST(SloTarget, UnknownMetricOrPercentileIsAOneLineError) {
  for (const char* bad :
       {"latency:p99=1", "ttft:p98=1", "ttft:p99", "ttft=1", "tpot:p99=-1", "tpot:p99=abc"}) {
    try {
      parse_slo_target(bad);
      ADD_FAILURE() << bad;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("--slo"), std::string::npos) << e.what();
    }
  }
}

// One A100 serves ~15 of these requests/s and one H100 ~33: at 20 requests/s the A100 needs
// two replicas ($3.58/hour) and the H100 one ($2.99/hour).
TEST(Planner, PicksTheKnownCheapestDeploymentAndVerifiesIt) {
  const PlanReport r = plan(small_plan(), Catalog());
  ASSERT_TRUE(r.feasible());
  EXPECT_EQ(r.enumerated, 2u);
  const PlanCandidate& w = r.candidates.front();
  EXPECT_EQ(w.gpu, "H100-SXM");
  EXPECT_EQ(w.replicas, 1);
  EXPECT_TRUE(w.verified);
  EXPECT_GE(w.headroom, 0);
  EXPECT_LE(w.predicted.ttft.p99_s, 0.5);
  EXPECT_LE(w.predicted.tpot.p99_s, 0.05);
  const PlanCandidate& a100 = r.candidates[1];
  EXPECT_EQ(a100.gpu, "A100-80GB-SXM");
  EXPECT_EQ(a100.replicas, 2);
  EXPECT_GT(a100.cost_per_hour, w.cost_per_hour);
  const std::string cmd = r.vllm_commands().at(0);
  EXPECT_NE(cmd.find("vllm serve meta-llama/Llama-2-7b-hf"), std::string::npos) << cmd;
  EXPECT_NE(cmd.find("--tensor-parallel-size 1"), std::string::npos) << cmd;
  EXPECT_NE(cmd.find("--max-model-len 4096"), std::string::npos) << cmd;
  EXPECT_NE(cmd.find("--enable-prefix-caching"), std::string::npos) << cmd;
  EXPECT_FALSE(r.pareto.empty());
}

// vLLM's --disable-custom-all-reduce, fixed for every candidate, is on the winner's serve line.
TEST(Planner, TheServeLineCarriesDisableCustomAllReduce) {
  PlanOptions o = small_plan();
  o.gpus = {"H100"};
  o.tp = {2};
  o.top_k = 1;
  const std::string custom = plan(o, Catalog()).vllm_commands().at(0);
  EXPECT_EQ(custom.find("--disable-custom-all-reduce"), std::string::npos) << custom;
  o.fixed = {"engine.disable_custom_all_reduce=true"};
  const std::string nccl = plan(o, Catalog()).vllm_commands().at(0);
  EXPECT_NE(nccl.find(" --disable-custom-all-reduce"), std::string::npos) << nccl;
}

TEST(Planner, ResultsDoNotDependOnTheThreadCount) {
  PlanOptions o = small_plan();
  o.max_num_seqs = {16, 64};
  const PlanReport one = plan(o, Catalog());
  o.threads = 2;
  const PlanReport two = plan(o, Catalog());
  EXPECT_EQ(one.to_json().dump(), two.to_json().dump());
  EXPECT_EQ(one.to_csv(), two.to_csv());
  EXPECT_EQ(one.pareto_csv(), two.pareto_csv());
}

// Ranks as threads stand in for `mpirun -np N` (tests/cli/mpi_2_ranks_test.cmake runs the real
// thing): more candidates than one search wave, so the cost bound that one wave's results
// set for the next must be the same on every rank.
TEST(Planner, ResultsDoNotDependOnTheRankCount) {
  PlanOptions o = small_plan();
  o.gpus = {"A100-80GB", "H100", "L40S", "L4", "B200"};
  o.tp = {1, 2, 4, 8};
  o.requests = 150;
  const PlanReport alone = plan(o, Catalog());
  for (int ranks : {2, 3}) {
    const std::vector<PlanReport> reports = testing::run_ranks<PlanReport>(
        ranks, [&](WorkShare& share) { return plan(o, Catalog(), share); });
    for (const PlanReport& r : reports) {
      EXPECT_EQ(r.to_json().dump(), alone.to_json().dump()) << ranks << " ranks";
      EXPECT_EQ(r.to_csv(), alone.to_csv());
      EXPECT_EQ(r.pareto_csv(), alone.pareto_csv());
      EXPECT_EQ(r.to_table(20), alone.to_table(20));
    }
  }
}

// The CLI's --model/--input-len/--output-len build a scenario in memory; the same JSON in a
// file plans the same.
TEST(Planner, AnInMemoryScenarioPlansLikeTheSameFile) {
  const nlohmann::json scenario = {{"name", "in memory"},
                                   {"model", "Llama-2-7B"},
                                   {"gpu", "H100"},
                                   {"workload",
                                    {{"arrival", {{"type", "poisson"}, {"rate_qps", 20}}},
                                     {"prompt_tokens", 512},
                                     {"output_tokens", 128},
                                     {"num_requests", 300}}}};
  PlanOptions o = small_plan();
  o.scenario_path.clear();
  o.scenario = scenario;
  o.fixed = {"engine.max_model_len=4096"};
  const PlanReport in_memory = plan(o, Catalog());
  ASSERT_TRUE(in_memory.feasible());

  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / "servesim_planner_in_memory.json";
  std::ofstream(file) << scenario.dump();
  o.scenario = nullptr;
  o.scenario_path = file.string();
  const PlanReport from_file = plan(o, Catalog());
  std::filesystem::remove(file);
  EXPECT_EQ(in_memory.to_json().dump(), from_file.to_json().dump());
  EXPECT_EQ(in_memory.to_table(10), from_file.to_table(10));
}

// More candidates than one search wave (16): the cost bound skips some, never the top K.
TEST(Planner, TheCostBoundSkipsOnlyCandidatesThatCannotEnterTheTopK) {
  PlanOptions o = small_plan();
  o.gpus = {"A100-80GB", "H100", "L40S", "L4", "B200"};
  o.tp = {1, 2, 4, 8};
  o.requests = 150;
  o.threads = 2;
  const PlanReport bounded = plan(o, Catalog());
  o.search_all = true;
  const PlanReport all = plan(o, Catalog());
  EXPECT_EQ(bounded.enumerated, 20u);
  EXPECT_LT(bounded.searched, all.searched);
  EXPECT_LT(bounded.simulations, all.simulations);
  ASSERT_TRUE(bounded.feasible());
  for (size_t r = 0; r < static_cast<size_t>(o.top_k); ++r) {
    EXPECT_EQ(bounded.candidates[r].gpu, all.candidates[r].gpu) << r;
    EXPECT_EQ(bounded.candidates[r].tp, all.candidates[r].tp) << r;
    EXPECT_EQ(bounded.candidates[r].replicas, all.candidates[r].replicas) << r;
  }
  EXPECT_TRUE(
      std::any_of(bounded.candidates.begin(), bounded.candidates.end(),
                  [](const PlanCandidate& c) { return c.status == CandidateStatus::kDominated; }));
  EXPECT_TRUE(
      std::none_of(all.candidates.begin(), all.candidates.end(),
                   [](const PlanCandidate& c) { return c.status == CandidateStatus::kDominated; }));
}

TEST(Planner, AnUnreachableSloSaysSoAndWhatWouldHaveToChange) {
  PlanOptions o = small_plan();
  o.slos = {parse_slo_target("tpot:p99=1ms")};
  const PlanReport r = plan(o, Catalog());
  EXPECT_FALSE(r.feasible());
  EXPECT_TRUE(r.vllm_commands().empty());
  const PlanCandidate& closest = r.candidates.front();
  EXPECT_EQ(closest.status, CandidateStatus::kSloUnreachable);
  EXPECT_NE(closest.suggestion.find("relax tpot:p99"), std::string::npos) << closest.suggestion;
  const std::string table = r.to_table(5);
  EXPECT_NE(table.find("No candidate meets the SLOs within the limits"), std::string::npos);
}

TEST(Planner, ALoadBeyondTheGpuLimitSuggestsTheLimitThatWouldDo) {
  PlanOptions o = small_plan();
  o.gpus = {"H100"};
  o.target_load = 100;
  o.max_gpus = 2;
  const PlanReport r = plan(o, Catalog());
  EXPECT_FALSE(r.feasible());
  EXPECT_EQ(r.candidates.front().status, CandidateStatus::kOverLimits);
  EXPECT_NE(r.candidates.front().suggestion.find("raise --max-gpus to"), std::string::npos);
}

TEST(Planner, ACandidateThatDoesNotFitIsPrunedWithoutSimulating) {
  PlanOptions o = small_plan();
  o.gpus = {"T4", "H100"};
  o.fixed = {"model=Llama-2-13B"};
  const PlanReport r = plan(o, Catalog());
  ASSERT_TRUE(r.feasible());
  EXPECT_EQ(r.simulated, 1u);
  const PlanCandidate& t4 = r.candidates.back();
  EXPECT_EQ(t4.gpu, "T4");
  EXPECT_EQ(t4.status, CandidateStatus::kDoesNotFit);
  EXPECT_EQ(t4.evaluations, 0);
}

TEST(Planner, ConcurrencyTargetsSizeByClients) {
  PlanOptions o = small_plan();
  o.load = PlanLoad::kConcurrency;
  o.target_load = 64;
  o.gpus = {"H100"};
  o.max_num_seqs = {32};
  const PlanReport r = plan(o, Catalog());
  ASSERT_TRUE(r.feasible());
  EXPECT_GE(r.candidates.front().replicas, 2);  // 32 running per replica at most
}

// The CLI's Ctrl-C: one thread polls once per step; the two probes and the first search run,
// the second search and the verification are skipped.
TEST(Planner, AStopLeavesLaterCandidatesInterruptedAndRanksTheSearchedOnes) {
  PlanOptions o = small_plan();
  std::atomic<int> polls{0};
  o.should_stop = [&] { return ++polls > 3; };
  const PlanReport r = plan(o, Catalog());
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.simulated, 2u);
  EXPECT_EQ(r.searched, 1u);
  ASSERT_EQ(r.candidates.size(), 2u);
  EXPECT_NE(r.candidates.front().status, CandidateStatus::kInterrupted);
  EXPECT_FALSE(r.candidates.front().verified);
  EXPECT_EQ(r.candidates.back().status, CandidateStatus::kInterrupted);
  EXPECT_EQ(r.to_json()["interrupted"], true);
  EXPECT_NE(r.to_csv().find(",interrupted,"), std::string::npos) << r.to_csv();
  const std::string table = r.to_table(10);
  EXPECT_NE(table.find("interrupted (Ctrl-C): 1 of the 2 candidates that fit were not searched"),
            std::string::npos)
      << table;
  EXPECT_FALSE(plan(small_plan(), Catalog()).to_json().contains("interrupted"));
}

void expect_one_line_error(const PlanOptions& o, const std::string& fragment) {
  try {
    plan(o, Catalog());
    ADD_FAILURE() << fragment;
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

// KV offload as a searched knob: the chat scenario whose histories outgrow one L4's KV cache
// sustains more load per GPU with a 64 GiB host tier, so that candidate wins and its vllm serve
// line carries the flag.
TEST(Planner, SearchesTheHostKvTierAsAKnob) {
  PlanOptions o;
  o.scenario_path = SERVESIM_SOURCE_DIR "/configs/scenarios/kv-offload-chat.json";
  o.target_load = 0.4;  // sessions started per second
  o.slos = {parse_slo_target("ttft:p90=2")};
  o.gpus = {"L4"};
  o.tp = {1};
  o.kv_offloading_sizes = {0, 64};
  o.requests = 400;
  o.top_k = 2;
  o.threads = 1;
  const PlanReport r = plan(o, Catalog());
  ASSERT_EQ(r.enumerated, 2u);
  ASSERT_TRUE(r.feasible());
  const PlanCandidate* with = nullptr;
  const PlanCandidate* without = nullptr;
  for (const PlanCandidate& c : r.candidates) {
    (c.engine.kv_offloading_size_gib ? with : without) = &c;
  }
  ASSERT_NE(with, nullptr);
  ASSERT_NE(without, nullptr);
  EXPECT_EQ(*with->engine.kv_offloading_size_gib, 64);
  EXPECT_GT(with->sustained, without->sustained);
  EXPECT_LE(with->total_gpus, without->total_gpus);
  EXPECT_TRUE(r.candidates.front().engine.kv_offloading_size_gib.has_value());
  const std::string cmd = r.vllm_commands().at(0);
  EXPECT_NE(cmd.find("--kv-offloading-size 64 --kv-offloading-backend native"), std::string::npos)
      << cmd;
  const std::string table = r.to_table(10);
  EXPECT_NE(table.find("+64 GiB host KV"), std::string::npos);
  // A multi-turn workload's arrivals start sessions: the target and every rate say so.
  EXPECT_TRUE(r.sessions);
  EXPECT_NE(table.find("target 0.4 sessions/s"), std::string::npos) << table;
  EXPECT_NE(r.candidates.front().reason.find(" sessions/s per replica"), std::string::npos)
      << r.candidates.front().reason;
  EXPECT_EQ(r.to_json()["target"]["sessions_per_s"], 0.4);
  EXPECT_FALSE(plan(small_plan(), Catalog()).sessions);
}

TEST(Planner, AShortRunIsHeldToTheRateItsArrivalsHad) {
  // 100 Poisson arrivals at this seed come 13% slower than the rate asked: one H100 serving
  // an 8B model at 4 req/s is refused "at any load" when a run is held to the rate asked.
  PlanOptions o;
  o.scenario = nlohmann::json::parse(R"({
    "model": "Llama-3.1-8B", "gpu": "H100-SXM", "engine": {"max_model_len": 4096},
    "workload": {"arrival": {"type": "poisson", "rate_qps": 1}, "prompt_tokens": 512,
                 "output_tokens": 32, "num_requests": 100},
    "slo": {"ttft_s": 2, "tpot_s": 0.1}, "seed": 3})");
  o.target_load = 4;
  o.gpus = {"H100-SXM"};
  o.tp = {1};
  o.requests = 100;
  o.top_k = 1;
  o.threads = 1;
  const PlanReport r = plan(o, Catalog());
  ASSERT_TRUE(r.feasible()) << r.to_table(3);
  EXPECT_EQ(r.candidates.front().total_gpus, 1);
}

TEST(Planner, BadInputsAreOneLineErrors) {
  PlanOptions o = small_plan();
  o.tp = {3};  // Llama-2-7B's 32 heads do not split three ways
  expect_one_line_error(o, "empty candidate set");
  o = small_plan();
  o.tp = {2, 4};
  o.max_gpus = 1;
  expect_one_line_error(o, "contradictory limits");
  o = small_plan();
  o.max_budget_per_hour = 0.5;
  expect_one_line_error(o, "contradictory limits");
  o = small_plan();
  o.target_load = 0;
  expect_one_line_error(o, "--target-qps");
  o = small_plan();
  o.slos.push_back(parse_slo_target("ttft:p99=1"));
  expect_one_line_error(o, "given twice");
  o = small_plan();
  o.gpus = {"H1000"};
  expect_one_line_error(o, "H1000");
  o = small_plan();
  o.fixed = {"gpu=H100"};
  expect_one_line_error(o, "--fix gpu");
  o = small_plan();
  o.max_error_rate = 1.5;
  expect_one_line_error(o, "--max-error-rate");
  o = small_plan();
  o.scenario_path.clear();
  expect_one_line_error(o, "no workload");
  o.scenario = {{"model", "Llama-2-7B"},
                {"gpu", "H100"},
                {"workload",
                 {{"arrival", {{"type", "poisson"}, {"rate_qps", 1}}},
                  {"prompt_tokens", 512},
                  {"output_tokens", 128},
                  {"num_requests", 20}}}};
  o.slos.clear();
  expect_one_line_error(o, "no SLO given; add --slo ttft:p99=0.5");
}

}  // namespace
}  // namespace servesim

namespace servesim {
namespace {

// A run that repeats its prompts (a benchmark's dataset) reuses cached blocks long after their
// requests end, so the planner's run keeps every block the GPU holds; new prompts each time
// never reuse one, and their runs hold only what max_num_seqs sequences can fill.
TEST(Planner, ARepeatedDatasetKeepsEveryKvBlockForThePrefixCache) {
  SimulationConfig base;
  base.model = Catalog().resolve_model("Llama-3.1-8B");
  base.workload.prompt_tokens = LengthDistribution::fixed(512);
  base.workload.output_tokens = LengthDistribution::fixed(32);
  PlanCandidate c;
  c.tp = 1;
  c.max_num_seqs = 8;
  c.engine.max_model_len = 4096;
  c.kv_cache_tokens = 400000;
  const HardwareSpec gpu = Catalog().resolve_gpu("H100-SXM");
  const Evaluator fresh(PlanOptions(), base, nlohmann::json(), nlohmann::json());
  EXPECT_TRUE(fresh.config(gpu, gpu, c, 1, PlanLoad::kQps, 2, 100).engine.num_gpu_blocks_override);
  base.workload.distinct_prompts = 100;
  const Evaluator repeated(PlanOptions(), base, nlohmann::json(), nlohmann::json());
  EXPECT_FALSE(
      repeated.config(gpu, gpu, c, 1, PlanLoad::kQps, 2, 100).engine.num_gpu_blocks_override);
}

}  // namespace
}  // namespace servesim
