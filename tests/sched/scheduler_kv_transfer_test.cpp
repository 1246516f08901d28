// Scheduler, disaggregated prefill: a prefill instance keeps a finished request's blocks until
// release_kv(); a decode instance allocates a remote prompt's blocks, announces the load, waits
// for finish_kv_load() and then samples the first token after recomputing one prompt token.
#include <gtest/gtest.h>

#include <vector>

#include "engine/sched/scheduler.h"
#include "scheduler_test_util.h"

namespace servesim {
namespace {

SchedulerConfig config(int64_t blocks = 100) {
  SchedulerConfig c;
  c.max_num_seqs = 8;
  c.max_num_batched_tokens = 64;
  c.max_model_len = 256;
  c.block_size = 4;
  c.num_gpu_blocks = blocks;
  return c;
}

Request request(uint64_t id, int prompt_len, int max_output, KvTransfer transfer) {
  Request r =
      testing::consecutive_request(id, prompt_len, max_output, static_cast<int32_t>(id * 1000));
  r.kv_transfer = transfer;
  return r;
}

SchedulerOutput step(Scheduler& s) {
  return testing::step_sampling(s);
}

TEST(SchedulerKvTransfer, PrefillInstanceHoldsBlocksUntilReleased) {
  Scheduler s(config());
  ASSERT_TRUE(s.add_request(request(1, 10, 1, KvTransfer::kSendAfterFinish)));
  step(s);
  ASSERT_EQ(s.finished().size(), 1u);
  EXPECT_EQ(s.finished()[0].num_output_tokens, 1);
  EXPECT_FALSE(s.has_unfinished());
  EXPECT_EQ(s.stats().num_held_kv, 1);
  EXPECT_EQ(s.stats().kv_blocks_used, 3);  // 10 prompt tokens in blocks of 4
  EXPECT_TRUE(s.release_kv(1));
  EXPECT_EQ(s.stats().kv_blocks_used, 0);
  EXPECT_EQ(s.stats().num_held_kv, 0);
  EXPECT_FALSE(s.release_kv(1));
  s.kv_cache().check_invariants();
}

TEST(SchedulerKvTransfer, PlainRequestsFreeAtOnceAndReleaseIsFalse) {
  Scheduler s(config());
  ASSERT_TRUE(s.add_request(request(1, 10, 1, KvTransfer::kNone)));
  step(s);
  EXPECT_EQ(s.stats().kv_blocks_used, 0);
  EXPECT_FALSE(s.release_kv(1));
}

TEST(SchedulerKvTransfer, AbortFreesHeldBlocks) {
  Scheduler s(config());
  ASSERT_TRUE(s.add_request(request(1, 10, 1, KvTransfer::kSendAfterFinish)));
  step(s);
  EXPECT_TRUE(s.abort(1));
  EXPECT_EQ(s.stats().kv_blocks_used, 0);
  EXPECT_EQ(s.stats().num_held_kv, 0);
}

TEST(SchedulerKvTransfer, DecodeInstanceLoadsThenRecomputesOneTokenAndDecodes) {
  Scheduler s(config());
  ASSERT_TRUE(s.add_request(request(1, 10, 3, KvTransfer::kLoadPrompt)));
  SchedulerOutput first = step(s);
  EXPECT_TRUE(first.sequences.empty());  // nothing computes while the KV is on its way
  ASSERT_EQ(first.kv_loads.size(), 1u);
  EXPECT_EQ(first.kv_loads[0].request_id, 1u);
  EXPECT_EQ(first.kv_loads[0].num_tokens, 10);
  EXPECT_EQ(s.stats().num_loading_kv, 1);
  EXPECT_EQ(s.stats().num_waiting, 1);
  EXPECT_EQ(s.stats().kv_blocks_used, 3);
  EXPECT_EQ(s.find(1)->status, RequestStatus::kWaitingForRemoteKv);

  // Still loading: later steps schedule nothing and announce nothing new.
  SchedulerOutput waiting = step(s);
  EXPECT_TRUE(waiting.sequences.empty());
  EXPECT_TRUE(waiting.kv_loads.empty());

  ASSERT_TRUE(s.finish_kv_load(1));
  EXPECT_FALSE(s.finish_kv_load(1));
  EXPECT_EQ(s.stats().num_loading_kv, 0);
  SchedulerOutput resumed = step(s);
  ASSERT_EQ(resumed.sequences.size(), 1u);
  EXPECT_EQ(resumed.sequences[0].num_new_tokens, 1);
  EXPECT_EQ(resumed.sequences[0].num_computed_tokens, 9);
  EXPECT_TRUE(resumed.sequences[0].samples);
  EXPECT_TRUE(resumed.sequences[0].is_prefill);
  SchedulerOutput decode = step(s);
  ASSERT_EQ(decode.sequences.size(), 1u);
  EXPECT_FALSE(decode.sequences[0].is_prefill);
  EXPECT_EQ(decode.sequences[0].num_computed_tokens, 10);
  step(s);
  ASSERT_EQ(s.finished().size(), 1u);
  EXPECT_EQ(s.finished()[0].num_output_tokens, 3);
  EXPECT_EQ(s.stats().kv_blocks_used, 0);
  s.kv_cache().check_invariants();
}

TEST(SchedulerKvTransfer, LoadWaitsForBlocksAndBlocksTheQueueBehindIt) {
  // 5 usable blocks of 4 tokens: the first 16-token prompt takes 4, the second cannot load.
  Scheduler s(config(6));
  ASSERT_TRUE(s.add_request(request(1, 16, 2, KvTransfer::kLoadPrompt)));
  ASSERT_TRUE(s.add_request(request(2, 16, 2, KvTransfer::kLoadPrompt)));
  SchedulerOutput first = step(s);
  ASSERT_EQ(first.kv_loads.size(), 1u);
  EXPECT_EQ(first.kv_loads[0].request_id, 1u);
  EXPECT_EQ(s.stats().num_loading_kv, 1);
  EXPECT_EQ(s.stats().num_waiting, 2);
  ASSERT_TRUE(s.finish_kv_load(1));
  step(s);  // request 1 samples its first token
  step(s);  // and its second: finished, blocks freed
  SchedulerOutput later = step(s);
  ASSERT_EQ(later.kv_loads.size(), 1u);
  EXPECT_EQ(later.kv_loads[0].request_id, 2u);
}

TEST(SchedulerKvTransfer, LocalPrefixHitShortensTheLoad) {
  Scheduler s(config());
  // A plain request leaves 8 of these tokens cached (two full blocks of the shared prefix).
  Request warm = request(1, 9, 1, KvTransfer::kNone);
  ASSERT_TRUE(s.add_request(warm));
  step(s);
  Request remote = request(2, 12, 2, KvTransfer::kLoadPrompt);
  std::copy(warm.prompt_token_ids.begin(), warm.prompt_token_ids.begin() + 8,
            remote.prompt_token_ids.begin());
  ASSERT_TRUE(s.add_request(remote));
  SchedulerOutput out = step(s);
  ASSERT_EQ(out.kv_loads.size(), 1u);
  EXPECT_EQ(out.kv_loads[0].num_tokens, 4);
  ASSERT_TRUE(s.finish_kv_load(2));
  step(s);
  EXPECT_EQ(s.find(2)->num_computed_tokens, 12);
}

TEST(SchedulerKvTransfer, BlocksBeingLoadedAreNotOfferedToThePrefixCache) {
  Scheduler s(config());
  ASSERT_TRUE(s.add_request(request(1, 12, 2, KvTransfer::kLoadPrompt)));
  step(s);
  Request same = request(1, 12, 1, KvTransfer::kNone);
  same.id = 2;
  ASSERT_TRUE(s.add_request(same));
  SchedulerOutput during = step(s);
  ASSERT_EQ(during.sequences.size(), 1u);
  EXPECT_EQ(during.sequences[0].num_cached_tokens_hit, 0);  // its KV is not there yet
}

TEST(SchedulerKvTransfer, AbortWhileLoadingFreesTheBlocksAndIgnoresTheLoadEnd) {
  Scheduler s(config());
  ASSERT_TRUE(s.add_request(request(1, 10, 3, KvTransfer::kLoadPrompt)));
  step(s);
  EXPECT_TRUE(s.abort(1));
  EXPECT_EQ(s.stats().kv_blocks_used, 0);
  EXPECT_EQ(s.stats().num_loading_kv, 0);
  EXPECT_FALSE(s.finish_kv_load(1));
  EXPECT_FALSE(s.has_unfinished());
  s.kv_cache().check_invariants();
}

TEST(SchedulerKvTransfer, LoadingRequestsDoNotTakeTheTokenBudget) {
  Scheduler s(config());
  ASSERT_TRUE(s.add_request(request(1, 40, 2, KvTransfer::kLoadPrompt)));
  ASSERT_TRUE(s.add_request(request(2, 60, 2, KvTransfer::kNone)));
  SchedulerOutput out = step(s);
  ASSERT_EQ(out.kv_loads.size(), 1u);
  ASSERT_EQ(out.sequences.size(), 1u);
  EXPECT_EQ(out.sequences[0].request_id, 2u);
  EXPECT_EQ(out.sequences[0].num_new_tokens, 60);
}

}  // namespace
}  // namespace servesim
