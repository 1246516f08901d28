// Synthetic prompts: shared groups share exactly their prefix; multi-turn contexts rebuild
// previous prompt + output + new tokens, and hit the prefix cache as real token ids would.
#include "sim/workload/synthetic_prompt.h"

#include <gtest/gtest.h>

#include <vector>

#include "engine/sched/scheduler.h"

namespace servesim {
namespace {

constexpr int32_t kVocab = 32000;

TEST(SyntheticPrompt, DeterministicAndInRange) {
  for (uint64_t p = 0; p < 1000; ++p) {
    const int32_t t = synthetic_token(3, p, kVocab);
    EXPECT_EQ(t, synthetic_token(3, p, kVocab));
    EXPECT_GE(t, 0);
    EXPECT_LT(t, kVocab);
    EXPECT_LT(synthetic_stream_token(3, p, 7), 7);
  }
  EXPECT_EQ(synthetic_token(0, 0, 1), 0);
}

TEST(SyntheticPrompt, SameGroupSharesExactlyTheSharedPrefix) {
  const auto a = synthetic_prompt(/*group=*/5, 100, /*stream=*/1, 50, kVocab);
  const auto b = synthetic_prompt(5, 100, 2, 80, kVocab);
  ASSERT_EQ(a.size(), 150u);
  ASSERT_EQ(b.size(), 180u);
  EXPECT_TRUE(std::equal(a.begin(), a.begin() + 100, b.begin()));
  int equal_after = 0;
  for (int i = 100; i < 150; ++i) equal_after += a[i] == b[i] ? 1 : 0;
  EXPECT_LE(equal_after, 1);  // independent streams: equal only by chance
  const auto c = synthetic_prompt(6, 100, 1, 50, kVocab);
  int equal_groups = 0;
  for (int i = 0; i < 100; ++i) equal_groups += a[i] == c[i] ? 1 : 0;
  EXPECT_LE(equal_groups, 1);
}

TEST(SyntheticPrompt, GroupsAndStreamsAreSeparateDomains) {
  int equal = 0;
  for (uint64_t p = 0; p < 200; ++p) {
    equal += synthetic_token(9, p, kVocab) == synthetic_stream_token(9, p, kVocab) ? 1 : 0;
  }
  EXPECT_LE(equal, 1);
}

TEST(SyntheticPrompt, NextTurnIsPromptPlusOutputPlusNewTokens) {
  const uint64_t session = 42;
  auto turn1 = synthetic_prompt(1, 64, session, 30, kVocab);
  std::vector<int32_t> history = turn1;
  append_stream_tokens(history, session, 20, kVocab);  // the outputs, sampled as the helper says
  for (size_t p = turn1.size(); p < history.size(); ++p) {
    EXPECT_EQ(history[p], synthetic_stream_token(session, p, kVocab));
  }
  append_stream_tokens(history, session, 15, kVocab);  // the user's next message
  EXPECT_EQ(synthetic_prompt(1, 64, session, 30 + 20 + 15, kVocab), history);
  std::vector<int32_t> reused(1000, -1);
  synthetic_prompt_into(reused, 1, 64, session, 65, kVocab);
  EXPECT_EQ(reused, history);
}

TEST(SyntheticPrompt, MultiTurnHitsThePreviousTurnInTheScheduler) {
  SchedulerConfig c;
  c.block_size = 16;
  c.num_gpu_blocks = 200;
  c.max_num_batched_tokens = 512;
  Scheduler s(c);
  const uint64_t session = 7;
  Request r;
  r.id = 1;
  r.prompt_token_ids = synthetic_prompt(3, 100, session, 37, kVocab);  // 137 tokens
  r.max_output_tokens = 20;
  r.ignore_eos = true;
  s.add_request(r);
  while (s.has_unfinished()) {
    const SchedulerOutput& out = s.schedule();
    StepResult res;
    for (const auto& e : out.sequences) {
      // The output lands at position num_computed + num_new of the session's stream.
      if (e.samples) {
        res.sampled_token_ids.push_back(synthetic_stream_token(
            session, static_cast<uint64_t>(e.num_computed_tokens + e.num_new_tokens), kVocab));
      }
    }
    s.update(out, res);
  }
  // Turn 1 left 137 + 20 = 157 tokens, of which 156 are in the KV cache: 9 full blocks.
  r.id = 2;
  r.prompt_token_ids = synthetic_prompt(3, 100, session, 37 + 20 + 10, kVocab);
  s.add_request(r);
  const SchedulerOutput& out = s.schedule();
  ASSERT_EQ(out.sequences.size(), 1u);
  EXPECT_EQ(out.sequences[0].num_cached_tokens_hit, 9 * 16);
  // Another session on the same system prompt shares only the 100-token group prefix.
  s.update(out, StepResult{{1}});
  r.id = 3;
  r.prompt_token_ids = synthetic_prompt(3, 100, session + 1, 40, kVocab);
  s.add_request(r);
  const SchedulerOutput& next = s.schedule();
  ASSERT_EQ(next.sequences.size(), 2u);  // 2's decode, then 3's prefill
  EXPECT_EQ(next.sequences[1].request_id, 3u);
  EXPECT_EQ(next.sequences[1].num_cached_tokens_hit, 6 * 16);
}

}  // namespace
}  // namespace servesim
