// The planner searches speculative decoding as a knob (--num-speculative-tokens): the
// candidates it enumerates, how each k is derived from the scenario's speculation, the regime
// where speculation wins (a tight TPOT at low batch) and where it loses (throughput at a large
// batch), the serve lines and report fields, and the one-line refusals.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "models/config_error.h"
#include "plan/planner.h"

namespace servesim {
namespace {

// Llama-3.1-8B with n-gram speculation, 60% of drafts accepted per position.
PlanOptions speculative_plan(double target_qps) {
  PlanOptions o;
  o.scenario_path = SERVESIM_SOURCE_DIR "/configs/scenarios/speculative-ngram-8b.json";
  o.target_load = target_qps;
  o.gpus = {"H100"};
  o.tp = {1};
  o.requests = 200;
  o.top_k = 1;
  o.threads = 1;
  o.slos = {parse_slo_target("tpot:p99=1")};
  return o;
}

// The same model and shape without a speculative block.
PlanOptions plain_plan() {
  PlanOptions o;
  o.scenario = nlohmann::json::parse(R"({
    "model": "Llama-3.1-8B", "gpu": "H100", "engine": {"max_model_len": 4096},
    "workload": {"arrival": {"type": "poisson", "rate_qps": 1}, "prompt_tokens": 128,
                 "output_tokens": 64, "num_requests": 100},
    "slo": {"tpot_s": 1}, "seed": 4
  })");
  o.target_load = 1;
  o.gpus = {"H100"};
  o.tp = {1};
  o.requests = 100;
  o.top_k = 1;
  o.threads = 1;
  return o;
}

int tokens_of(const PlanCandidate& c) {
  return c.engine.speculative ? c.engine.speculative->num_speculative_tokens : 0;
}

void expect_one_line_error(const PlanOptions& o, const std::string& fragment) {
  try {
    plan(o, Catalog());
    ADD_FAILURE() << "no error; expected: " << fragment;
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(SpeculativePlan, EnumeratesEveryDraftLengthForEachMaxNumSeqs) {
  PlanOptions o = speculative_plan(1);
  o.max_num_seqs = {8, 64};
  o.num_speculative_tokens = {0, 2, 4};
  const PlanReport r = plan(o, Catalog());
  EXPECT_EQ(r.enumerated, 6u);
  std::set<std::pair<int, int>> seen;  // (max_num_seqs, k)
  for (const PlanCandidate& c : r.candidates) {
    seen.insert({c.max_num_seqs, tokens_of(c)});
    if (c.engine.speculative) {
      // The rate form holds at any k: one entry per draft position.
      EXPECT_EQ(c.engine.speculative->acceptance.size(), static_cast<size_t>(tokens_of(c)));
      EXPECT_EQ(c.engine.speculative->acceptance.front(), 0.6);
      EXPECT_EQ(c.engine.speculative->method, SpeculativeMethod::kNgram);
    }
  }
  EXPECT_EQ(seen.size(), 6u);
  EXPECT_TRUE(seen.count({64, 0}));
  EXPECT_TRUE(seen.count({8, 4}));
}

TEST(SpeculativePlan, WithoutTheOptionEveryCandidateKeepsTheScenariosSpeculation) {
  const PlanReport r = plan(speculative_plan(1), Catalog());
  ASSERT_EQ(r.enumerated, 1u);
  EXPECT_EQ(tokens_of(r.candidates.front()), 4);
  const std::string cmd = r.vllm_commands().front();
  EXPECT_NE(cmd.find(R"(--speculative-config '{"method":"ngram","num_speculative_tokens":4)"),
            std::string::npos)
      << cmd;
}

// vLLM's rejection sampler stops at the first rejection, so a per-position list is a
// property of its first positions: cut to a shorter k, and no figure for a longer one.
TEST(SpeculativePlan, APerPositionListIsCutToShorterDraftsAndLongerOnesAreInvalid) {
  PlanOptions o = plain_plan();
  o.scenario["engine"]["speculative"] = nlohmann::json::parse(
      R"({"method": "ngram", "num_speculative_tokens": 3,
          "acceptance_per_position": [0.8, 0.6, 0.4]})");
  o.num_speculative_tokens = {2, 5};
  o.search_all = true;
  const PlanReport r = plan(o, Catalog());
  ASSERT_EQ(r.candidates.size(), 2u);
  const PlanCandidate* cut = nullptr;
  const PlanCandidate* longer = nullptr;
  for (const PlanCandidate& c : r.candidates) {
    (c.status == CandidateStatus::kInvalid ? longer : cut) = &c;
  }
  ASSERT_NE(cut, nullptr);
  ASSERT_NE(longer, nullptr);
  EXPECT_EQ(cut->engine.speculative->acceptance, (std::vector<double>{0.8, 0.6}));
  EXPECT_NE(longer->reason.find("acceptance_per_position gives 3 positions, too few for 5"),
            std::string::npos)
      << longer->reason;
}

// The known shape, as the planner sees it. A tight TPOT at a light load: plain decoding
// misses it on any replica (one token per step), three accepted-in-expectation drafts per
// step meet it, so only speculation is feasible. A heavy load with a loose SLO: the verify
// step's extra tokens cost a large batch more than the drafts save, so speculation sustains
// less per replica and needs more GPUs.
TEST(SpeculativePlan, WinsATightTpotAtLowBatchAndLosesThroughputAtALargeOne) {
  PlanOptions tight = speculative_plan(0.5);
  tight.num_speculative_tokens = {0, 4};
  tight.max_num_seqs = {4};
  tight.slos = {parse_slo_target("tpot:p99=0.006")};
  const PlanReport low = plan(tight, Catalog());
  ASSERT_TRUE(low.feasible()) << low.to_table(5);
  EXPECT_EQ(tokens_of(low.candidates.front()), 4);
  const std::string low_text = low.to_table(5);
  EXPECT_NE(low_text.find("best without speculation: H100-SXM TP1 PP1 max_num_seqs 4 misses SLO"),
            std::string::npos)
      << low_text;

  PlanOptions heavy = speculative_plan(100);
  heavy.num_speculative_tokens = {0, 4};
  heavy.max_num_seqs = {512};
  heavy.requests = 2000;  // a batch of 512 needs a run longer than its ramp
  heavy.slos = {parse_slo_target("tpot:p99=0.2")};
  heavy.search_all = true;
  heavy.top_k = 2;
  const PlanReport high = plan(heavy, Catalog());
  ASSERT_TRUE(high.feasible()) << high.to_table(5);
  const PlanCandidate& winner = high.candidates.front();
  EXPECT_EQ(tokens_of(winner), 0) << high.to_table(5);
  const PlanCandidate* speculating = nullptr;
  for (const PlanCandidate& c : high.candidates) {
    if (tokens_of(c) == 4) speculating = &c;
  }
  ASSERT_NE(speculating, nullptr);
  EXPECT_LT(speculating->sustained, winner.sustained) << high.to_table(5);
  const std::string high_text = high.to_table(5);
  EXPECT_NE(high_text.find("best with speculation: "), std::string::npos) << high_text;
  EXPECT_NE(high_text.find("| +ngram k=4"), std::string::npos) << high_text;
}

TEST(SpeculativePlan, ReportCarriesTheDraftTokensOfEachCandidate) {
  PlanOptions o = speculative_plan(1);
  o.num_speculative_tokens = {0, 3};
  o.search_all = true;
  const PlanReport r = plan(o, Catalog());
  std::set<int> json_tokens;
  const nlohmann::json j = r.to_json();
  for (const nlohmann::json& c : j["candidates"]) {
    json_tokens.insert(c["num_speculative_tokens"].get<int>());
  }
  EXPECT_EQ(json_tokens, (std::set<int>{0, 3}));
  const std::string csv = r.to_csv();
  EXPECT_NE(csv.find(",deployment,kv_offloading_size_gib,num_speculative_tokens\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",TP1 PP1,,3\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",TP1 PP1,,0\n"), std::string::npos) << csv;
}

// A disaggregated group speculates on both roles' engines (only decode steps draft); the
// decode instance's serve line carries the flag.
TEST(SpeculativePlan, ADisaggregatedGroupSpeculatesInItsDecodeRole) {
  PlanOptions o = speculative_plan(1);
  o.pd_ratios = {{{1, 1}}};
  o.aggregated = false;
  o.num_speculative_tokens = {3};
  const PlanReport r = plan(o, Catalog());
  ASSERT_TRUE(r.feasible()) << r.to_table(5);
  const PlanCandidate& c = r.candidates.front();
  ASSERT_TRUE(c.disaggregated());
  EXPECT_EQ(tokens_of(c), 3);
  const std::vector<std::string> commands = r.vllm_commands();
  ASSERT_EQ(commands.size(), 2u);
  EXPECT_NE(commands[1].find(R"("num_speculative_tokens":3)"), std::string::npos) << commands[1];
}

TEST(SpeculativePlan, BadDraftLengthsAreOneLineErrors) {
  PlanOptions o = plain_plan();
  o.num_speculative_tokens = {0, 3};
  expect_one_line_error(o, "has no engine.speculative block to take the method and acceptance");
  o.num_speculative_tokens = {17};
  expect_one_line_error(o, "--num-speculative-tokens values must be in [0, 16]");
  o.num_speculative_tokens = {-1};
  expect_one_line_error(o, "--num-speculative-tokens values must be in [0, 16]");
  PlanOptions fixed = speculative_plan(1);
  fixed.num_speculative_tokens = {2};
  fixed.fixed = {"engine.speculative.num_speculative_tokens=3"};
  expect_one_line_error(fixed, "--fix engine.speculative.num_speculative_tokens contradicts");
}

// k = 0 only needs no block, and a --fix of the speculative block gives a plain scenario one
// to vary.
TEST(SpeculativePlan, ZeroNeedsNoBlockAndAFixedBlockIsVaried) {
  PlanOptions o = plain_plan();
  o.num_speculative_tokens = {0};
  EXPECT_EQ(tokens_of(plan(o, Catalog()).candidates.front()), 0);
  o.fixed = {
      R"(engine.speculative={"method":"ngram","num_speculative_tokens":4,"acceptance_rate":0.5})"};
  o.num_speculative_tokens = {0, 2};
  o.search_all = true;
  std::set<int> tokens;
  for (const PlanCandidate& c : plan(o, Catalog()).candidates) tokens.insert(tokens_of(c));
  EXPECT_EQ(tokens, (std::set<int>{0, 2}));
}

}  // namespace
}  // namespace servesim
