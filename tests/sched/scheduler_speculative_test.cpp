// Scheduler with speculative decoding (vLLM V1 semantics): decodes with drafts are scheduled
// for 1 + drafts tokens within budget and max_model_len, rejected drafts roll back the KV,
// stops inside the accepted run, bad results and bad configs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "engine/sched/scheduler.h"
#include "models/config_error.h"

namespace servesim {
namespace {

using ::testing::HasSubstr;

SchedulerConfig spec_config(int k) {
  SchedulerConfig c;
  c.max_num_seqs = 8;
  c.max_num_batched_tokens = 64;
  c.max_model_len = 256;
  c.block_size = 4;
  c.num_gpu_blocks = 1000;
  c.num_speculative_tokens = k;
  return c;
}

Request make_request(uint64_t id, int prompt_len, int max_output) {
  Request r;
  r.id = id;
  r.prompt_token_ids.resize(static_cast<size_t>(prompt_len));
  std::iota(r.prompt_token_ids.begin(), r.prompt_token_ids.end(), static_cast<int32_t>(id * 1000));
  r.max_output_tokens = max_output;
  r.ignore_eos = true;
  return r;
}

// Every sampling entry produces `sampled` tokens (capped at 1 + its drafts), the first being
// `token`, and proposes `drafts` draft tokens for its next step.
StepResult result_for(const SchedulerOutput& out, int sampled, int drafts, int32_t token = 7) {
  StepResult r;
  for (const ScheduledSequence& e : out.sequences) {
    if (!e.samples) continue;
    const int n = std::min(sampled, 1 + e.num_spec_tokens);
    r.num_sampled_tokens.push_back(n);
    for (int t = 0; t < n; ++t) r.sampled_token_ids.push_back(token + t);
    r.num_draft_tokens.push_back(drafts);
    for (int d = 0; d < drafts; ++d) r.draft_token_ids.push_back(100 + d);
  }
  return r;
}

TEST(SchedulerSpeculative, SchedulesDecodeWithDraftsAndRollsBackRejected) {
  Scheduler s(spec_config(4));
  s.add_request(make_request(1, 10, 50));
  const SchedulerOutput& prefill = s.schedule();
  ASSERT_EQ(prefill.sequences.size(), 1u);
  EXPECT_EQ(prefill.sequences[0].num_spec_tokens, 0);
  s.update(prefill, result_for(prefill, 1, 4));  // first token, then 4 drafts
  EXPECT_EQ(s.find(1)->spec_token_ids.size(), 4u);

  const SchedulerOutput& verify = s.schedule();
  ASSERT_EQ(verify.sequences.size(), 1u);
  const ScheduledSequence& e = verify.sequences[0];
  EXPECT_EQ(e.num_new_tokens, 5);  // 1 + k
  EXPECT_EQ(e.num_spec_tokens, 4);
  EXPECT_EQ(e.num_computed_tokens, 10);
  EXPECT_TRUE(e.samples);
  EXPECT_FALSE(e.is_prefill);
  EXPECT_GE(e.block_table.size() * 4, 15u);  // slots for all 5 tokens
  EXPECT_EQ(
      std::vector<int32_t>(s.scheduled_spec_tokens(0).begin(), s.scheduled_spec_tokens(0).end()),
      (std::vector<int32_t>{100, 101, 102, 103}));
  s.update(verify, result_for(verify, 3, 4));  // 2 drafts accepted + bonus token
  const Sequence* seq = s.find(1);
  ASSERT_NE(seq, nullptr);
  EXPECT_EQ(seq->num_output_tokens(), 4);
  EXPECT_EQ(seq->num_computed_tokens, seq->num_tokens() - 1);  // 2 rejected rolled back
  EXPECT_EQ(s.stats().num_draft_tokens, 4);
  EXPECT_EQ(s.stats().num_accepted_tokens, 2);
}

TEST(SchedulerSpeculative, DraftsCutToKAndBudgetAndMaxModelLen) {
  SchedulerConfig c = spec_config(3);
  c.max_model_len = 14;
  Scheduler s(c);
  s.add_request(make_request(1, 10, 100));
  const SchedulerOutput& prefill = s.schedule();
  s.update(prefill, result_for(prefill, 1, 9));  // 9 proposed, k = 3 kept
  EXPECT_EQ(s.find(1)->spec_token_ids.size(), 3u);
  // 11 tokens known, max_model_len 14: at most 14 - 1 - 10 = 3 tokens, so 2 drafts.
  const SchedulerOutput& verify = s.schedule();
  EXPECT_EQ(verify.sequences[0].num_new_tokens, 3);
  EXPECT_EQ(verify.sequences[0].num_spec_tokens, 2);
  s.update(verify, result_for(verify, 3, 3));
  EXPECT_TRUE(s.finished().size() == 1 && s.finished()[0].finish_reason == FinishReason::kLength);
  EXPECT_EQ(s.finished()[0].num_output_tokens, 4);  // 14 - 10: max_model_len reached

  SchedulerConfig b = spec_config(4);
  b.max_num_seqs = 2;
  b.max_num_batched_tokens = 7;
  Scheduler t(b);
  t.add_request(make_request(1, 3, 100));
  t.add_request(make_request(2, 3, 100));
  const SchedulerOutput& p = t.schedule();
  t.update(p, result_for(p, 1, 4));
  const SchedulerOutput& v = t.schedule();  // budget 7: 5 for the first, 2 for the second
  ASSERT_EQ(v.sequences.size(), 2u);
  EXPECT_EQ(v.sequences[0].num_spec_tokens, 4);
  EXPECT_EQ(v.sequences[1].num_new_tokens, 2);
  EXPECT_EQ(v.sequences[1].num_spec_tokens, 1);
  t.update(v, result_for(v, 1, 0));
}

TEST(SchedulerSpeculative, StopsInsideTheAcceptedRun) {
  Scheduler s(spec_config(4));
  Request r = make_request(1, 8, 100);
  r.ignore_eos = false;
  r.stop_token_ids = {9};
  s.add_request(r);
  s.add_request(make_request(2, 8, 3));  // max_tokens 3 inside a run of 5
  const SchedulerOutput& p = s.schedule();
  s.update(p, result_for(p, 1, 4, /*token=*/1));
  const SchedulerOutput& v = s.schedule();
  s.update(v, result_for(v, 5, 4, /*token=*/7));  // 7, 8, 9 (stop), 10, 11
  ASSERT_EQ(s.finished().size(), 2u);
  for (const FinishedRequest& f : s.finished()) {
    if (f.id == 1) {
      EXPECT_EQ(f.finish_reason, FinishReason::kStop);
      EXPECT_EQ(f.num_output_tokens, 4);  // 1, 7, 8, 9
    } else {
      EXPECT_EQ(f.finish_reason, FinishReason::kLength);
      EXPECT_EQ(f.num_output_tokens, 3);
    }
  }
  EXPECT_FALSE(s.has_unfinished());
  EXPECT_EQ(s.stats().kv_blocks_used, 0);
}

TEST(SchedulerSpeculative, PreemptionDropsDrafts) {
  SchedulerConfig c = spec_config(2);
  c.num_gpu_blocks = 8;  // 7 usable blocks of 4 tokens
  c.enable_prefix_caching = false;
  Scheduler s(c);
  s.add_request(make_request(1, 12, 10));
  s.add_request(make_request(2, 12, 10));
  const SchedulerOutput& p = s.schedule();  // 3 + 3 blocks (the 12th token needs the 3rd)
  s.update(p, result_for(p, 1, 2));
  // Each decode now needs slots up to token 15: a 4th block each, one too many.
  const SchedulerOutput& v = s.schedule();
  ASSERT_EQ(v.preempted_ids.size(), 1u);
  const Sequence* victim = s.find(v.preempted_ids[0]);
  ASSERT_NE(victim, nullptr);
  EXPECT_TRUE(victim->spec_token_ids.empty());
  s.update(v, result_for(v, 1, 0));
}

TEST(SchedulerSpeculative, RejectsBadResults) {
  Scheduler s(spec_config(2));
  s.add_request(make_request(1, 4, 10));
  const SchedulerOutput& p = s.schedule();
  s.update(p, result_for(p, 1, 2));
  const SchedulerOutput& v = s.schedule();
  StepResult too_many;
  too_many.num_sampled_tokens = {4};  // 1 + 2 drafts at most
  too_many.sampled_token_ids = {1, 2, 3, 4};
  EXPECT_THROW(s.update(v, too_many), std::invalid_argument);
  StepResult mismatched;
  mismatched.num_sampled_tokens = {2};
  mismatched.sampled_token_ids = {1};
  EXPECT_THROW(s.update(v, mismatched), std::invalid_argument);
  StepResult drafts_off;
  drafts_off.num_sampled_tokens = {1};
  drafts_off.sampled_token_ids = {1};
  drafts_off.num_draft_tokens = {2};
  drafts_off.draft_token_ids = {5};
  EXPECT_THROW(s.update(v, drafts_off), std::invalid_argument);
  s.update(v, result_for(v, 3, 0));
  EXPECT_EQ(s.find(1)->num_output_tokens(), 4);
}

TEST(SchedulerSpeculative, RefusesBadConfigsByName) {
  const auto expect_error = [](SchedulerConfig c, const std::string& text) {
    try {
      c.validate();
      ADD_FAILURE() << "no error for " << text;
    } catch (const ConfigError& e) {
      EXPECT_THAT(e.what(), HasSubstr(text));
    }
  };
  SchedulerConfig c = spec_config(-1);
  expect_error(c, "num_speculative_tokens");
  c = spec_config(kMaxSpeculativeTokens + 1);
  expect_error(c, "num_speculative_tokens");
  c = spec_config(4);
  c.policy = SchedulingPolicy::kStatic;
  expect_error(c, "continuous");
  c.policy = SchedulingPolicy::kPrefillFirst;
  expect_error(c, "prefill_first");
  spec_config(kMaxSpeculativeTokens).validate();
}

TEST(SchedulerSpeculative, AllAcceptedMatchesPlainDecodingTokens) {
  // With every draft accepted and the same token stream, speculation changes how many steps
  // the output takes, not the output.
  const auto run = [](int k) {
    Scheduler s(spec_config(k));
    s.add_request(make_request(1, 6, 20));
    std::vector<int32_t> out;
    int steps = 0;
    while (s.has_unfinished()) {
      const SchedulerOutput& o = s.schedule();
      ++steps;
      StepResult r;
      for (const ScheduledSequence& e : o.sequences) {
        if (!e.samples) continue;
        const int n = 1 + e.num_spec_tokens;
        const int first = e.num_computed_tokens + e.num_new_tokens - e.num_spec_tokens;
        r.num_sampled_tokens.push_back(n);
        for (int t = 0; t < n; ++t) r.sampled_token_ids.push_back(first + t);
        r.num_draft_tokens.push_back(k);
        for (int d = 0; d < k; ++d) r.draft_token_ids.push_back(0);
      }
      s.update(o, r);
    }
    const Sequence* none = s.find(1);
    EXPECT_EQ(none, nullptr);
    return steps;
  };
  EXPECT_EQ(run(0), 20);
  EXPECT_EQ(run(4), 1 + 4);  // prefill, then 5 tokens a step for 19 tokens: 4 steps
}

}  // namespace
}  // namespace servesim
