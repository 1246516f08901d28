// SpeculativeConfig: vLLM's --speculative-config form read strictly, its defaults, the
// acceptance model's closed form, and SpeculativeCostModel's draft terms.
#include "models/speculative_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "models/catalog.h"
#include "models/config_error.h"
#include "models/memory_plan.h"
#include "models/speculative_cost_model.h"

namespace servesim {
namespace {

using ::testing::HasSubstr;

SpeculativeConfig parse(const std::string& text) {
  const Catalog catalog;
  return SpeculativeConfig::from_text(text, "--speculative-config", &catalog);
}

void expect_error(const std::string& text, const std::string& what) {
  try {
    parse(text);
    ADD_FAILURE() << "no error for " << text;
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr(what)) << text;
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

TEST(SpeculativeConfig, ReadsVllmFormWithItsDefaults) {
  SpeculativeConfig s = parse(
      R"({"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":4,"acceptance_rate":0.6})");
  EXPECT_EQ(s.method, SpeculativeMethod::kNgram);
  EXPECT_EQ(s.num_speculative_tokens, 4);
  EXPECT_EQ(s.prompt_lookup_max, 4);
  EXPECT_EQ(s.prompt_lookup_min, 4);  // vLLM: one given sets both
  EXPECT_EQ(s.acceptance, std::vector<double>(4, 0.6));
  s = parse(R"({"method":"ngram","num_speculative_tokens":2,"acceptance_rate":0.5})");
  EXPECT_EQ(s.prompt_lookup_min, 5);
  EXPECT_EQ(s.prompt_lookup_max, 5);
  s = parse(R"({"model":"Llama-3.1-8B","num_speculative_tokens":3,
                "acceptance_per_position":[0.8,0.7,0.6]})");
  EXPECT_EQ(s.method, SpeculativeMethod::kDraftModel);  // "model" without "method"
  ASSERT_TRUE(s.draft_model);
  EXPECT_EQ(s.draft_model->name, "Llama-3.1-8B");
  EXPECT_EQ(
      s.vllm_json().dump(),
      R"({"method":"draft_model","model":"meta-llama/Llama-3.1-8B","num_speculative_tokens":3})");
  s = parse(R"({"method":"mtp","num_speculative_tokens":1,"acceptance_rate":0.9})");
  EXPECT_EQ(s.vllm_json().dump(), R"({"method":"mtp","num_speculative_tokens":1})");
}

TEST(SpeculativeConfig, RefusesBadInputWithOneLine) {
  expect_error("{", "not valid JSON");
  expect_error(R"({"method":"ngram","num_speculative_tokens":0,"acceptance_rate":0.5})",
               "num_speculative_tokens");
  expect_error(R"({"method":"ngram","num_speculative_tokens":17,"acceptance_rate":0.5})",
               "between 1 and 16");
  expect_error(R"({"method":"ngram","num_speculative_tokens":2,"acceptance_rate":1.5})", "[0, 1]");
  expect_error(R"({"method":"ngram","num_speculative_tokens":2,"acceptance_per_position":[0.5]})",
               "acceptance_per_position");
  expect_error(R"({"method":"medusa","num_speculative_tokens":2,"acceptance_rate":0.5})", "method");
  expect_error(R"({"method":"draft_model","num_speculative_tokens":2,"acceptance_rate":0.5})",
               "model");
  expect_error(
      R"({"method":"ngram","num_speculative_tokens":2,"acceptance_rate":0.5,"speculative_tokens":2})",
      "speculative_tokens");
  expect_error(R"({"method":"ngram","num_speculative_tokens":2,"acceptance_rate":0.5,
                   "prompt_lookup_min":4,"prompt_lookup_max":2})",
               "prompt_lookup_min");
  expect_error(R"({"method":"mtp","num_speculative_tokens":2,"acceptance_rate":0.5,
                   "prompt_lookup_max":2})",
               "ngram only");
}

TEST(SpeculativeConfig, DraftModelNeedsTheTargetsVocabulary) {
  const Catalog catalog;
  const SpeculativeConfig s =
      parse(R"({"model":"Llama-3.1-8B","num_speculative_tokens":3,"acceptance_rate":0.7})");
  s.validate(catalog.resolve_model("Llama-3.1-70B"));  // same tokenizer: fine
  try {
    s.validate(catalog.resolve_model("Llama-2-7B"));
    ADD_FAILURE() << "no vocabulary error";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("vocabulary"));
  }
}

TEST(SpeculativeConfig, ExpectedTokensPerStepMatchesTheClosedForm) {
  for (double a : {0.0, 0.3, 0.6, 0.8, 0.95}) {
    for (int k : {1, 2, 4, 8}) {
      SpeculativeConfig s;
      s.num_speculative_tokens = k;
      s.acceptance.assign(static_cast<size_t>(k), a);
      EXPECT_NEAR(s.expected_tokens_per_step(), (1 - std::pow(a, k + 1)) / (1 - a), 1e-12);
    }
  }
  SpeculativeConfig s;
  s.acceptance = {0.8, 0.5};
  EXPECT_DOUBLE_EQ(s.expected_tokens_per_step(), 1 + 0.8 + 0.8 * 0.5);
}

TEST(SpeculativeConfig, MatchRateIsNgramsShareOfDecodesWithDrafts) {
  const SpeculativeConfig s = parse(
      R"({"method":"ngram","num_speculative_tokens":2,"acceptance_per_position":[0.8,0.5],"match_rate":0.25})");
  EXPECT_DOUBLE_EQ(s.match_rate, 0.25);
  EXPECT_DOUBLE_EQ(s.expected_tokens_per_decode(), 1 + 0.25 * (0.8 + 0.8 * 0.5));
  EXPECT_DOUBLE_EQ(
      parse(R"({"method":"ngram","num_speculative_tokens":2,"acceptance_rate":0.5})").match_rate,
      1.0);
  // What it writes, it reads back.
  const SpeculativeConfig back = parse(s.simulator_json().dump());
  EXPECT_EQ(back.acceptance, s.acceptance);
  EXPECT_DOUBLE_EQ(back.match_rate, 0.25);

  expect_error(
      R"({"method":"ngram","num_speculative_tokens":2,"acceptance_rate":0.5,"match_rate":0})",
      "--speculative-config: match_rate must be in (0, 1] (got 0.000000); without "
      "matches, turn speculation off");
  expect_error(
      R"({"method":"ngram","num_speculative_tokens":2,"acceptance_rate":0.5,"match_rate":1.5})",
      "match_rate must be in (0, 1]");
  expect_error(
      R"({"method":"mtp","num_speculative_tokens":1,"acceptance_rate":0.5,"match_rate":0.5})",
      "match_rate applies to method ngram only");
}

TEST(SpeculativeConfig, MeasuredAcceptanceGivesTheRunsTokensPerDecode) {
  SpeculativeConfig s;
  s.method = SpeculativeMethod::kNgram;
  s.num_speculative_tokens = 3;
  // 1,000 decodes, 400 with drafts: 300 kept draft 1, 120 drafts 1-2, 30 all three.
  const std::vector<int64_t> accepted = {300, 120, 30};
  s.set_measured_acceptance(1000, 400, accepted);
  EXPECT_DOUBLE_EQ(s.match_rate, 0.4);
  ASSERT_EQ(s.acceptance.size(), 3u);
  EXPECT_DOUBLE_EQ(s.acceptance[0], 0.75);
  EXPECT_DOUBLE_EQ(s.acceptance[1], 0.4);
  EXPECT_DOUBLE_EQ(s.acceptance[2], 0.25);
  // The run produced 1,000 + 450 tokens in its 1,000 decodes.
  EXPECT_NEAR(s.expected_tokens_per_decode(), 1.45, 1e-12);

  // A method that drafts every step keeps match_rate 1: its decodes all verified drafts.
  s.method = SpeculativeMethod::kDraftModel;
  s.set_measured_acceptance(400, 400, accepted);
  EXPECT_DOUBLE_EQ(s.match_rate, 1.0);
  // A position nothing reached keeps 0 rather than dividing by zero.
  s.set_measured_acceptance(400, 400, std::vector<int64_t>{10, 0, 0});
  EXPECT_EQ(s.acceptance, (std::vector<double>{0.025, 0, 0}));
}

TEST(SpeculativeCostModel, PricesEachMethodsDraft) {
  const Catalog catalog;
  const ModelSpec target = catalog.resolve_model("Llama-3.1-70B");
  const HardwareSpec gpu = catalog.resolve_gpu("H100");
  EngineConfig engine;
  engine.max_model_len = 8192;
  BatchShape proposers;
  for (int i = 0; i < 8; ++i) proposers.add_sequence(1, 1000, false, true);

  const SpeculativeCostModel ngram(
      parse(R"({"method":"ngram","num_speculative_tokens":4,"acceptance_rate":0.6})"), target, gpu,
      ParallelConfig{}, engine, RooflineOptions{});
  // 8 sequences x 1001 context tokens x 1 n-gram length.
  EXPECT_NEAR(ngram.draft_s(proposers), 8 * 1001 * kNgramScanSPerToken, 1e-12);

  const SpeculativeCostModel small(
      parse(R"({"model":"Llama-3.1-8B","num_speculative_tokens":2,"acceptance_rate":0.6})"), target,
      gpu, ParallelConfig{}, engine, RooflineOptions{});
  const SpeculativeCostModel more(
      parse(R"({"model":"Llama-3.1-8B","num_speculative_tokens":4,"acceptance_rate":0.6})"), target,
      gpu, ParallelConfig{}, engine, RooflineOptions{});
  EXPECT_GT(small.draft_s(proposers), 0);
  EXPECT_NEAR(more.draft_s(proposers), 2 * small.draft_s(proposers), 1e-12);  // k passes
  const SpeculativeCostModel head(
      parse(R"({"method":"eagle","num_speculative_tokens":4,"acceptance_rate":0.6})"), target, gpu,
      ParallelConfig{}, engine, RooflineOptions{});
  EXPECT_LT(head.draft_s(proposers), more.draft_s(proposers));  // 1 layer vs a 32-layer model
  EXPECT_EQ(head.draft_s(BatchShape{}), 0);

  const SpeculativeConfig bare = parse(R"({"method":"ngram","num_speculative_tokens":2})");
  EXPECT_TRUE(bare.acceptance.empty());  // vLLM's own form reads
  EXPECT_THROW(SpeculativeCostModel(bare, target, gpu, ParallelConfig{}, engine, RooflineOptions{}),
               ConfigError);  // but cannot be simulated
  ParallelConfig pp;
  pp.pp = 2;
  EXPECT_THROW(SpeculativeCostModel(ngram.config(), target, gpu, pp, engine, RooflineOptions{}),
               ConfigError);
}

TEST(SpeculativeMemory, DraftWeightsAndKvShareTheGpu) {
  const Catalog catalog;
  const ModelSpec target = catalog.resolve_model("Llama-3.1-70B");
  const HardwareSpec gpu = catalog.resolve_gpu("H100");
  ParallelConfig tp4;
  tp4.tp = 4;
  EngineConfig engine;
  engine.max_model_len = 8192;
  const MemoryPlan plain = MemoryPlan::compute(target, gpu, tp4, engine);
  EngineConfig with_ngram = engine;
  with_ngram.speculative =
      parse(R"({"method":"ngram","num_speculative_tokens":4,"acceptance_rate":0.6})");
  EXPECT_EQ(MemoryPlan::compute(target, gpu, tp4, with_ngram).num_gpu_blocks,
            plain.num_gpu_blocks);  // prompt lookup needs no GPU memory
  EngineConfig with_draft = engine;
  with_draft.speculative = parse(R"({"model":"Llama-3.1-8B","num_speculative_tokens":4})");
  const MemoryPlan draft = MemoryPlan::compute(target, gpu, tp4, with_draft);
  const ModelSpec small = catalog.resolve_model("Llama-3.1-8B");
  // The 8B draft at TP 4: about 16 GB / 4 of bf16 weights per GPU.
  EXPECT_NEAR(static_cast<double>(draft.weights_bytes - plain.weights_bytes),
              2.0 * static_cast<double>(small.total_params()) / 4, 0.1e9);
  // Its 32 layers take pages next to the target's 80 in every block.
  EXPECT_LT(draft.num_gpu_blocks, plain.num_gpu_blocks * 80 / (80 + 32) + 1);
  EngineConfig with_mtp = engine;
  with_mtp.speculative = parse(R"({"method":"mtp","num_speculative_tokens":1})");
  const MemoryPlan mtp = MemoryPlan::compute(target, gpu, tp4, with_mtp);
  EXPECT_GT(mtp.weights_bytes, plain.weights_bytes);
  EXPECT_LT(mtp.weights_bytes, draft.weights_bytes);
  EXPECT_LT(mtp.num_gpu_blocks, plain.num_gpu_blocks);
}

}  // namespace
}  // namespace servesim
