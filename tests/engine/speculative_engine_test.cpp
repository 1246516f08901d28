// The engine's n-gram (prompt-lookup) speculative decoding: greedy verification gives
// exactly the tokens of plain greedy decoding, drafts are really accepted, a stop token inside
// an accepted run ends the request there, and unsupported settings are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "engine/runtime/engine.h"
#include "models/config_error.h"
#include "tests/engine/tiny_model.h"

namespace servesim {
namespace {

using testing::test_prompt;
using testing::tiny_model_spec;
using testing::tiny_scheduler_config;

EngineOptions options(int k) {
  EngineOptions o{tiny_scheduler_config(), 1, false};
  o.scheduler.num_speculative_tokens = k;
  if (k > 0) {
    SpeculativeConfig spec;
    spec.method = SpeculativeMethod::kNgram;
    spec.num_speculative_tokens = k;
    spec.prompt_lookup_min = 1;
    spec.prompt_lookup_max = 3;
    o.speculative = spec;
  }
  return o;
}

// Each request's streamed tokens, run to completion.
std::map<uint64_t, std::vector<int32_t>> run(Engine& engine) {
  std::map<uint64_t, std::vector<int32_t>> tokens;
  engine.set_token_callback([&](uint64_t id, int32_t t) { tokens[id].push_back(t); });
  while (engine.has_unfinished()) engine.step();
  return tokens;
}

Request request(uint64_t id, int prompt_len, int max_output, int salt) {
  Request r;
  r.id = id;
  r.prompt_token_ids = test_prompt(prompt_len, salt);
  r.max_output_tokens = max_output;
  return r;
}

TEST(SpeculativeEngine, NgramOutputsAreExactlyPlainGreedyDecoding) {
  const Weights w = Weights::random(tiny_model_spec(), 21);
  Engine plain(w, options(0));
  Engine spec(w, options(3));
  for (uint64_t id = 1; id <= 4; ++id) {
    ASSERT_TRUE(plain.add_request(request(id, 12 + 5 * int(id), 60, int(id))));
    ASSERT_TRUE(spec.add_request(request(id, 12 + 5 * int(id), 60, int(id))));
  }
  const auto expected = run(plain);
  const auto got = run(spec);
  for (uint64_t id = 1; id <= 4; ++id) {
    ASSERT_EQ(got.at(id).size(), 60u);
    EXPECT_EQ(got.at(id), expected.at(id)) << "request " << id;
  }
  // A random tiny model repeats itself, so prompt lookup finds drafts and some are right.
  EXPECT_GT(spec.num_draft_tokens(), 0);
  EXPECT_GT(spec.num_accepted_tokens(), 0);
  EXPECT_LT(spec.scheduler().stats().num_steps, plain.scheduler().stats().num_steps);

  // The per-position counters (vLLM's num_accepted_tokens_per_pos) add up to the totals, and the
  // simulator's keys made from them give the run's own tokens per decode.
  const SpecDecodeCounters& n = spec.scheduler().spec_decode_counters();
  ASSERT_EQ(n.num_accepted_per_position.size(), 3u);
  EXPECT_GT(n.num_drafts, 0);
  EXPECT_LE(n.num_drafts, n.num_decodes);
  int64_t accepted = 0;
  for (size_t p = 0; p < 3; ++p) {
    accepted += n.num_accepted_per_position[p];
    if (p > 0) {
      EXPECT_LE(n.num_accepted_per_position[p], n.num_accepted_per_position[p - 1]);
    }
  }
  EXPECT_EQ(accepted, spec.num_accepted_tokens());
  // Each decode yields 1 + its accepted drafts; the 59 tokens after the prefill's, plus at most
  // k drafts per request accepted past max_tokens in its last step.
  EXPECT_GE(n.num_decodes + accepted, 4 * 59);
  EXPECT_LE(n.num_decodes + accepted, 4 * (59 + 3));
  SpeculativeConfig measured = *options(3).speculative;
  measured.set_measured_acceptance(n.num_decodes, n.num_drafts, n.num_accepted_per_position);
  EXPECT_NEAR(measured.expected_tokens_per_decode(),
              static_cast<double>(n.num_decodes + accepted) / static_cast<double>(n.num_decodes),
              1e-12);
}

TEST(SpeculativeEngine, StopTokenInsideAnAcceptedRunEndsThere) {
  const Weights w = Weights::random(tiny_model_spec(), 21);
  Engine plain(w, options(0));
  ASSERT_TRUE(plain.add_request(request(1, 17, 60, 1)));
  const std::vector<int32_t> full = run(plain).at(1);
  // The first token that appears for the first time after 10 outputs becomes the stop token.
  size_t first = 10;
  while (first < full.size() && std::find(full.begin(), full.begin() + static_cast<long>(first),
                                          full[first]) != full.begin() + static_cast<long>(first)) {
    ++first;
  }
  if (first == full.size()) GTEST_SKIP() << "no fresh token after 10 outputs for this seed";
  const std::vector<int32_t> expected(full.begin(), full.begin() + static_cast<long>(first) + 1);
  for (int k : {0, 3}) {
    Engine e(w, options(k));
    Request r = request(1, 17, 60, 1);
    r.stop_token_ids = {full[first]};
    ASSERT_TRUE(e.add_request(r));
    EXPECT_EQ(run(e).at(1), expected) << "k " << k;
    ASSERT_EQ(e.finished().size(), 1u);
    EXPECT_EQ(e.finished()[0].finish_reason, FinishReason::kStop);
  }
}

TEST(SpeculativeEngine, RefusesWhatItCannotVerify) {
  const Weights w = Weights::random(tiny_model_spec(), 21);
  Engine e(w, options(2));
  EXPECT_THROW(e.add_request(request(1, 8, 4, 0), SamplingParams{0.7f, 1.0f, 1}), ConfigError);
  EXPECT_THROW(e.add_request(request(2, 8, 4, 0), SamplingParams{}, 3), ConfigError);
  EngineOptions mtp = options(2);
  mtp.speculative->method = SpeculativeMethod::kMtp;
  EXPECT_THROW(Engine(w, mtp), ConfigError);
  EngineOptions mismatch = options(2);
  mismatch.scheduler.num_speculative_tokens = 3;
  EXPECT_THROW(Engine(w, mismatch), ConfigError);
}

}  // namespace
}  // namespace servesim
