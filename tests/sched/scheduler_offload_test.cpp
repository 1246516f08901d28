// Scheduler, KV-cache offload (vLLM 0.11-0.14 OffloadingConnector semantics): every block a step
// fills is offered to the host tier; a request whose prefix the GPU cache lost but the host
// tier holds loads it instead of computing it; a finished request keeps its blocks until its
// stores are done; preemption recovers through the host tier.
#include <gtest/gtest.h>

#include <vector>

#include "engine/sched/scheduler.h"
#include "models/config_error.h"
#include "scheduler_test_util.h"

namespace servesim {
namespace {

SchedulerConfig config(int64_t gpu_blocks, int64_t host_blocks) {
  SchedulerConfig c;
  c.max_num_seqs = 8;
  c.max_num_batched_tokens = 64;
  c.max_model_len = 256;
  c.block_size = 4;
  c.num_gpu_blocks = gpu_blocks;
  c.num_host_kv_blocks = host_blocks;
  return c;
}

Request request(uint64_t id, int prompt_len, int max_output, int32_t base) {
  return testing::consecutive_request(id, prompt_len, max_output, base);
}

SchedulerOutput step(Scheduler& s) {
  return testing::step_sampling(s);
}

// Runs steps, completing each step's host stores at once, until nothing is live.
void drain(Scheduler& s) {
  while (s.has_unfinished()) {
    const SchedulerOutput out = step(s);
    s.complete_host_stores(out.step);
  }
}

TEST(SchedulerOffload, EveryFilledBlockIsOfferedOnce) {
  Scheduler s(config(100, 64));
  ASSERT_TRUE(s.add_request(request(1, 17, 6, 0)));
  const SchedulerOutput first = step(s);
  EXPECT_EQ(first.num_host_store_blocks, 4);  // 17 prompt tokens: 4 full blocks of 4
  // Decodes add tokens 18..22; the block of tokens 17..20 fills when token 20 is computed.
  int stored = 0;
  while (s.has_unfinished()) stored += step(s).num_host_store_blocks;
  EXPECT_EQ(stored, 1);
  EXPECT_EQ(s.stats().host_kv_stored_blocks, 5);
  EXPECT_EQ(s.stats().host_kv_blocks_used, 5);
}

TEST(SchedulerOffload, FinishedRequestKeepsItsBlocksUntilItsStoresAreDone) {
  Scheduler s(config(100, 64));
  ASSERT_TRUE(s.add_request(request(1, 17, 1, 0)));
  const SchedulerOutput out = step(s);
  ASSERT_EQ(s.finished().size(), 1u);
  EXPECT_FALSE(s.has_unfinished());
  EXPECT_EQ(s.stats().num_held_kv, 1);
  EXPECT_EQ(s.stats().kv_blocks_used, 5);
  s.complete_host_stores(out.step);
  EXPECT_EQ(s.stats().num_held_kv, 0);
  EXPECT_EQ(s.stats().kv_blocks_used, 0);
}

TEST(SchedulerOffload, PrefixLostOnTheGpuIsLoadedFromTheHost) {
  Scheduler s(config(8, 64));  // 7 usable GPU blocks
  ASSERT_TRUE(s.add_request(request(1, 17, 1, 0)));
  drain(s);
  ASSERT_TRUE(s.add_request(request(2, 25, 1, 5000)));  // takes all 7 blocks: evicts request 1's
  drain(s);
  ASSERT_GE(s.stats().num_evicted_blocks, 4);

  ASSERT_TRUE(s.add_request(request(3, 17, 2, 0)));
  const SchedulerOutput load = step(s);
  EXPECT_TRUE(load.sequences.empty());  // a load computes nothing
  ASSERT_EQ(load.kv_loads.size(), 1u);
  EXPECT_EQ(load.kv_loads[0].request_id, 3u);
  EXPECT_EQ(load.kv_loads[0].num_tokens, 16);
  EXPECT_TRUE(load.kv_loads[0].from_host);
  EXPECT_EQ(s.stats().num_loading_kv, 1);
  EXPECT_EQ(s.stats().kv_blocks_used, 4);  // the loaded blocks; the fifth comes with the compute

  // Nothing runs until the KV is in.
  EXPECT_TRUE(step(s).sequences.empty());
  ASSERT_TRUE(s.finish_kv_load(3));
  const SchedulerOutput run = step(s);
  ASSERT_EQ(run.sequences.size(), 1u);
  EXPECT_EQ(run.sequences[0].num_computed_tokens, 16);
  EXPECT_EQ(run.sequences[0].num_new_tokens, 1);
  EXPECT_TRUE(run.sequences[0].samples);
  EXPECT_EQ(s.stats().host_kv_hit_tokens, 16);
  s.complete_host_stores(run.step);
  drain(s);
  ASSERT_FALSE(s.finished().empty());
  EXPECT_EQ(s.finished().back().num_cached_prompt_tokens, 16);
  s.kv_cache().check_invariants();
  s.host_kv().check_invariants();
}

TEST(SchedulerOffload, GpuHitIsExtendedByTheHost) {
  Scheduler s(config(13, 64));                       // 12 usable GPU blocks
  ASSERT_TRUE(s.add_request(request(1, 33, 1, 0)));  // 9 blocks, 8 of them full
  drain(s);
  // Freed tail first, request 1's last blocks are the next evicted after the 3 never used:
  // 7 blocks for request 2 take those 3, the partial block and full blocks 8, 7 and 6.
  ASSERT_TRUE(s.add_request(request(2, 25, 1, 5000)));
  drain(s);
  ASSERT_TRUE(s.add_request(request(3, 33, 1, 0)));
  const SchedulerOutput out = step(s);
  ASSERT_EQ(out.kv_loads.size(), 1u);
  EXPECT_EQ(out.kv_loads[0].num_tokens, 12);  // blocks 6..8 from the host
  ASSERT_TRUE(s.finish_kv_load(3));
  const SchedulerOutput run = step(s);
  ASSERT_EQ(run.sequences.size(), 1u);
  EXPECT_EQ(run.sequences[0].num_computed_tokens, 32);  // 20 from the GPU, 12 loaded
  EXPECT_EQ(run.sequences[0].num_new_tokens, 1);
}

TEST(SchedulerOffload, WholeGpuHitNeedsNoLoad) {
  Scheduler s(config(100, 64));
  ASSERT_TRUE(s.add_request(request(1, 33, 1, 0)));
  drain(s);
  ASSERT_TRUE(s.add_request(request(2, 33, 1, 0)));
  const SchedulerOutput out = step(s);
  EXPECT_TRUE(out.kv_loads.empty());
  ASSERT_EQ(out.sequences.size(), 1u);
  EXPECT_EQ(out.sequences[0].num_cached_tokens_hit, 32);
  EXPECT_EQ(s.stats().host_kv_hit_tokens, 0);
}

TEST(SchedulerOffload, StoresInFlightAreNotLoadable) {
  Scheduler s(config(8, 64));
  ASSERT_TRUE(s.add_request(request(1, 17, 1, 0)));
  const SchedulerOutput first = step(s);  // stores announced, never completed here
  ASSERT_TRUE(s.add_request(request(2, 17, 1, 0)));
  const SchedulerOutput second = step(s);
  EXPECT_TRUE(second.kv_loads.empty());
  ASSERT_EQ(second.sequences.size(), 1u);
  // Request 1 is held for its stores, so its blocks are still cached on the GPU.
  EXPECT_EQ(second.sequences[0].num_cached_tokens_hit, 16);
  s.complete_host_stores(second.step);
  EXPECT_GT(first.num_host_store_blocks, 0);
  EXPECT_EQ(s.stats().num_held_kv, 0);
}

TEST(SchedulerOffload, PreemptedRequestIsReloadedInsteadOfRecomputed) {
  // Two requests that together outgrow 12 usable blocks: the later one is preempted.
  SchedulerConfig c = config(13, 64);
  c.max_num_batched_tokens = 64;
  Scheduler s(c);
  ASSERT_TRUE(s.add_request(request(1, 20, 24, 0)));
  ASSERT_TRUE(s.add_request(request(2, 20, 24, 5000)));
  int preemptions = 0;
  int host_loads = 0;
  int recomputed_tokens = 0;
  while (s.has_unfinished()) {
    const SchedulerOutput out = step(s);
    preemptions += static_cast<int>(out.preempted_ids.size());
    for (const KvLoad& load : out.kv_loads) {
      EXPECT_TRUE(load.from_host);
      ++host_loads;
      s.complete_host_stores(out.step);
      EXPECT_TRUE(s.finish_kv_load(load.request_id));
    }
    for (const ScheduledSequence& e : out.sequences) {
      if (e.is_prefill && e.num_computed_tokens == 0) recomputed_tokens += e.num_new_tokens;
    }
    s.complete_host_stores(out.step);
    s.kv_cache().check_invariants();
    s.host_kv().check_invariants();
  }
  ASSERT_GT(preemptions, 0);
  EXPECT_EQ(host_loads, preemptions);
  EXPECT_EQ(recomputed_tokens, 40);  // only the two first prefills ran from token 0
  EXPECT_EQ(s.stats().num_finished, 2);
}

TEST(SchedulerOffload, AbortDuringALoadUnpinsAndFrees) {
  Scheduler s(config(8, 64));
  ASSERT_TRUE(s.add_request(request(1, 17, 1, 0)));
  drain(s);
  ASSERT_TRUE(s.add_request(request(2, 25, 1, 5000)));
  drain(s);
  ASSERT_TRUE(s.add_request(request(3, 17, 1, 0)));
  ASSERT_EQ(step(s).kv_loads.size(), 1u);
  EXPECT_TRUE(s.abort(3));
  EXPECT_FALSE(s.finish_kv_load(3));
  EXPECT_EQ(s.stats().num_loading_kv, 0);
  EXPECT_EQ(s.stats().kv_blocks_used, 0);
  s.host_kv().check_invariants();  // a pin left behind would break the LRU invariant
}

TEST(SchedulerOffload, AbortWithTheStepInFlightCancelsItsStores) {
  Scheduler s(config(100, 64));
  ASSERT_TRUE(s.add_request(request(1, 17, 4, 0)));
  const SchedulerOutput& out = s.schedule();
  EXPECT_EQ(out.num_host_store_blocks, 4);
  EXPECT_TRUE(s.abort(1));
  s.update(out, StepResult(std::vector<int32_t>{7}));  // its token is ignored
  s.complete_host_stores(out.step);
  EXPECT_EQ(s.stats().host_kv_blocks_used, 0);
  s.host_kv().check_invariants();
}

TEST(SchedulerOffload, FullTierSkipsTheStore) {
  Scheduler s(config(100, 3));
  ASSERT_TRUE(s.add_request(request(1, 9, 1, 0)));  // 2 full blocks
  const SchedulerOutput a = step(s);
  EXPECT_EQ(a.num_host_store_blocks, 2);
  ASSERT_TRUE(s.add_request(request(2, 9, 1, 5000)));
  const SchedulerOutput b = step(s);  // 2 more blocks, 1 free and nothing evictable yet
  EXPECT_EQ(b.num_host_store_blocks, 0);
  s.complete_host_stores(b.step);
  EXPECT_EQ(s.stats().num_held_kv, 0);  // nothing of request 2 was in flight
  EXPECT_EQ(s.stats().host_kv_blocks_used, 2);
}

TEST(SchedulerOffload, BadConfigsAreOneLineErrors) {
  SchedulerConfig c = config(100, 64);
  c.enable_prefix_caching = false;
  EXPECT_THROW(Scheduler{c}, ConfigError);
  c = config(100, -1);
  EXPECT_THROW(Scheduler{c}, ConfigError);
  c = config(100, 64);
  c.policy = SchedulingPolicy::kStatic;
  EXPECT_THROW(Scheduler{c}, ConfigError);
  try {
    c = config(100, 64);
    c.enable_prefix_caching = false;
    Scheduler{c};
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("enable_prefix_caching"), std::string::npos);
  }
}

}  // namespace
}  // namespace servesim
