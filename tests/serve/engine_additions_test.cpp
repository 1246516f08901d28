// What `engine serve` added to the Engine: abort() and min_tokens.
#include <gtest/gtest.h>

#include "engine/runtime/engine.h"
#include "tests/serve/serve_test_harness.h"

namespace servesim {
namespace {

Request request_of(uint64_t id, int max_tokens, std::vector<int32_t> stop) {
  Request r;
  r.id = id;
  r.prompt_token_ids = {5, 6, 7, 8, 9};
  r.max_output_tokens = max_tokens;
  r.stop_token_ids = std::move(stop);
  return r;
}

constexpr int32_t kFree = 300;  // the one token that does not stop

std::vector<int32_t> every_token_but_one() {
  std::vector<int32_t> all;
  for (int32_t t = 0; t < testing::serve_model_spec().vocab_size; ++t) {
    if (t != kFree) all.push_back(t);
  }
  return all;
}

TEST(EngineAdditions, MinTokensMasksStopTokensUntilReached) {
  const Weights w = Weights::random(testing::serve_model_spec(), 7);
  Engine engine(w, EngineOptions{testing::serve_scheduler_config(), 1, false});
  std::vector<int32_t> tokens;
  engine.set_token_callback([&](uint64_t, int32_t t) { tokens.push_back(t); });
  ASSERT_TRUE(engine.add_request(request_of(1, 10, every_token_but_one()), {}, 3));
  while (engine.has_unfinished()) engine.step();
  // Three with every stop token masked (only kFree is left), then whatever comes stops.
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[0], kFree);
  EXPECT_EQ(tokens[2], kFree);
  EXPECT_EQ(engine.finished().back().finish_reason, FinishReason::kStop);
  tokens.clear();
  ASSERT_TRUE(engine.add_request(request_of(2, 10, every_token_but_one())));
  while (engine.has_unfinished()) engine.step();
  EXPECT_LE(tokens.size(), 1u + 9u);
  EXPECT_NE(tokens[0] == kFree, tokens.size() == 1u);  // stops at once unless it drew kFree
}

TEST(EngineAdditions, AbortFreesTheBlocksAndIsReported) {
  const Weights w = Weights::random(testing::serve_model_spec(), 7);
  Engine engine(w, EngineOptions{testing::serve_scheduler_config(), 1, false});
  const int32_t free_before = engine.scheduler().kv_cache().pool().num_free_blocks();
  ASSERT_TRUE(engine.add_request(request_of(1, 100, {})));
  engine.step();
  EXPECT_LT(engine.scheduler().kv_cache().pool().num_free_blocks(), free_before);
  EXPECT_TRUE(engine.abort(1));
  EXPECT_FALSE(engine.abort(1));
  EXPECT_FALSE(engine.has_unfinished());
  EXPECT_EQ(engine.scheduler().kv_cache().pool().num_free_blocks(), free_before);
  engine.scheduler().kv_cache().check_invariants();
  ASSERT_FALSE(engine.finished().empty());
  EXPECT_EQ(engine.finished().back().finish_reason, FinishReason::kAbort);
}

}  // namespace
}  // namespace servesim
