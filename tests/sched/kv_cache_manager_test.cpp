// KVCacheManager: allocation of slots, prefix caching over full blocks, the last-token rule,
// eviction order.
#include "engine/sched/kv_cache_manager.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace servesim {
namespace {

constexpr int kBs = 4;

std::vector<int32_t> seq_tokens(int n, int32_t base = 100) {
  std::vector<int32_t> t(n);
  std::iota(t.begin(), t.end(), base);
  return t;
}

struct Seq {
  std::vector<int32_t> tokens;
  KVSequenceState kv;
  explicit Seq(std::vector<int32_t> t, uint64_t salt = 0) : tokens(std::move(t)) { kv.reset(salt); }
};

TEST(KVCacheManager, AllocatesCeilTokensOverBlockSize) {
  KVCacheManager kv(11, kBs, false);
  Seq s(seq_tokens(9));
  ASSERT_TRUE(kv.allocate_slots(s.kv, s.tokens, 0, 5));
  EXPECT_EQ(s.kv.block_ids.size(), 2u);
  ASSERT_TRUE(kv.allocate_slots(s.kv, s.tokens, 5, 3));  // 8 tokens: still 2 blocks
  EXPECT_EQ(s.kv.block_ids.size(), 2u);
  ASSERT_TRUE(kv.allocate_slots(s.kv, s.tokens, 8, 1));  // 9 tokens: 3 blocks
  EXPECT_EQ(s.kv.block_ids.size(), 3u);
  EXPECT_EQ(kv.pool().num_used_blocks(), 3);
  kv.free(s.kv);
  EXPECT_EQ(kv.pool().num_used_blocks(), 0);
  kv.check_invariants();
}

TEST(KVCacheManager, FailedAllocationChangesNothing) {
  KVCacheManager kv(3, kBs, true);  // 2 usable blocks
  Seq a(seq_tokens(12));
  EXPECT_FALSE(kv.allocate_slots(a.kv, a.tokens, 0, 12));
  EXPECT_TRUE(a.kv.block_ids.empty());
  EXPECT_EQ(kv.pool().num_free_blocks(), 2);
  EXPECT_EQ(kv.pool().num_cached_blocks(), 0);
  kv.check_invariants();
}

TEST(KVCacheManager, PrefixHitCoversFullBlocksOnly) {
  KVCacheManager kv(20, kBs, true);
  Seq a(seq_tokens(10));  // blocks [0..4) [4..8) full, [8..10) partial
  ASSERT_TRUE(kv.allocate_slots(a.kv, a.tokens, 0, 10));
  EXPECT_EQ(kv.pool().num_cached_blocks(), 2);  // the partial block is never cached
  Seq b(seq_tokens(11));                        // same first 10 tokens
  std::vector<int32_t> hit;
  EXPECT_EQ(kv.get_computed_blocks(b.kv, b.tokens, hit), 8);
  EXPECT_EQ(hit, (std::vector<int32_t>{a.kv.block_ids[0], a.kv.block_ids[1]}));
  ASSERT_TRUE(kv.allocate_slots(b.kv, b.tokens, 0, 3, hit));
  EXPECT_EQ(b.kv.block_ids.size(), 3u);
  EXPECT_EQ(kv.pool().ref_count(a.kv.block_ids[0]), 2);
  kv.check_invariants();
}

TEST(KVCacheManager, HitNeverCoversTheLastToken) {
  KVCacheManager kv(20, kBs, true);
  Seq a(seq_tokens(9));
  ASSERT_TRUE(kv.allocate_slots(a.kv, a.tokens, 0, 9));
  // b is exactly the first two full blocks of a: 8 tokens. Its last token must be
  // recomputed, so only the first block hits.
  Seq b(seq_tokens(8));
  std::vector<int32_t> hit;
  EXPECT_EQ(kv.get_computed_blocks(b.kv, b.tokens, hit), 4);
  // One more token and both blocks hit.
  Seq c(seq_tokens(9));
  EXPECT_EQ(kv.get_computed_blocks(c.kv, c.tokens, hit), 8);
  // A one-token prompt cannot hit at all.
  Seq d(seq_tokens(1));
  EXPECT_EQ(kv.get_computed_blocks(d.kv, d.tokens, hit), 0);
}

TEST(KVCacheManager, HitStopsAtTheFirstDifferentBlock) {
  KVCacheManager kv(20, kBs, true);
  Seq a(seq_tokens(13));
  ASSERT_TRUE(kv.allocate_slots(a.kv, a.tokens, 0, 13));
  auto t = seq_tokens(13);
  t[5] = -1;  // second block differs; the third is equal but its prefix is not
  Seq b(t);
  std::vector<int32_t> hit;
  EXPECT_EQ(kv.get_computed_blocks(b.kv, b.tokens, hit), 4);
}

TEST(KVCacheManager, SaltSeparatesPrefixes) {
  KVCacheManager kv(20, kBs, true);
  Seq a(seq_tokens(9), 1);
  ASSERT_TRUE(kv.allocate_slots(a.kv, a.tokens, 0, 9));
  Seq b(seq_tokens(9), 2);
  std::vector<int32_t> hit;
  EXPECT_EQ(kv.get_computed_blocks(b.kv, b.tokens, hit), 0);
  Seq c(seq_tokens(9), 1);
  EXPECT_EQ(kv.get_computed_blocks(c.kv, c.tokens, hit), 8);
}

TEST(KVCacheManager, FreedBlocksStayCachedAndHitFromTheFreeQueue) {
  KVCacheManager kv(6, kBs, true);  // 5 usable
  Seq a(seq_tokens(9));
  ASSERT_TRUE(kv.allocate_slots(a.kv, a.tokens, 0, 9));
  kv.free(a.kv);
  EXPECT_EQ(kv.pool().num_free_blocks(), 5);
  EXPECT_EQ(kv.pool().num_cached_free_blocks(), 2);
  Seq b(seq_tokens(12));
  std::vector<int32_t> hit;
  EXPECT_EQ(kv.get_computed_blocks(b.kv, b.tokens, hit), 8);
  // b needs 3 blocks: 2 hits (free, so not allocatable any more) + 1 new from the 3 others.
  ASSERT_TRUE(kv.allocate_slots(b.kv, b.tokens, 0, 4, hit));
  EXPECT_EQ(kv.pool().num_free_blocks(), 2);
  kv.check_invariants();
}

TEST(KVCacheManager, HitsOnFreeBlocksAreNotCountedAsAllocatable) {
  KVCacheManager kv(4, kBs, true);  // 3 usable
  Seq a(seq_tokens(9));
  ASSERT_TRUE(kv.allocate_slots(a.kv, a.tokens, 0, 9));  // 3 blocks, 2 cached
  kv.free(a.kv);
  // 13 tokens need 4 blocks: 2 hits + 2 new, but only 1 block besides the hits is free.
  Seq b(seq_tokens(13));
  std::vector<int32_t> hit;
  ASSERT_EQ(kv.get_computed_blocks(b.kv, b.tokens, hit), 8);
  EXPECT_FALSE(kv.allocate_slots(b.kv, b.tokens, 0, 5, hit));
  EXPECT_EQ(kv.pool().num_free_blocks(), 3);
  EXPECT_EQ(kv.pool().num_cached_free_blocks(), 2);
  kv.check_invariants();
}

TEST(KVCacheManager, FreeEvictsTheTailBeforeThePrefix) {
  KVCacheManager kv(5, kBs, true);  // 4 usable
  Seq a(seq_tokens(16));            // 4 full blocks, the last never hit (last-token rule)
  ASSERT_TRUE(kv.allocate_slots(a.kv, a.tokens, 0, 16));
  const auto blocks = a.kv.block_ids;
  kv.free(a.kv);
  // Reverse order: the last block is at the head of the LRU queue.
  EXPECT_EQ(kv.pool().free_queue_snapshot(),
            (std::vector<int32_t>{blocks[3], blocks[2], blocks[1], blocks[0]}));
  // A new unrelated sequence of 2 blocks evicts a's two last blocks, not its prefix.
  Seq other(seq_tokens(8, 5000));
  ASSERT_TRUE(kv.allocate_slots(other.kv, other.tokens, 0, 8));
  EXPECT_EQ(other.kv.block_ids, (std::vector<int32_t>{blocks[3], blocks[2]}));
  Seq again(seq_tokens(16));
  std::vector<int32_t> hit;
  EXPECT_EQ(kv.get_computed_blocks(again.kv, again.tokens, hit), 8);
  EXPECT_EQ(hit, (std::vector<int32_t>{blocks[0], blocks[1]}));
  EXPECT_EQ(kv.pool().num_evictions(), 2u);
  kv.check_invariants();
}

TEST(KVCacheManager, BlocksFilledByDecodeAreCached) {
  KVCacheManager kv(10, kBs, true);
  Seq a(seq_tokens(3));
  ASSERT_TRUE(kv.allocate_slots(a.kv, a.tokens, 0, 3));
  EXPECT_EQ(kv.pool().num_cached_blocks(), 0);
  a.tokens.push_back(7);  // a sampled token; the next step computes it and fills block 0
  ASSERT_TRUE(kv.allocate_slots(a.kv, a.tokens, 3, 1));
  EXPECT_EQ(kv.pool().num_cached_blocks(), 1);
  EXPECT_TRUE(kv.pool().is_cached(a.kv.block_ids[0]));
}

TEST(KVCacheManager, DuplicateComputationStillCachesLaterBlocks) {
  // Two sequences computed the same first block concurrently (no hit for either); the second
  // one's block is a duplicate and stays uncached, but its later blocks chain by content.
  KVCacheManager kv(20, kBs, true);
  Seq a(seq_tokens(5));
  auto tb = seq_tokens(9);
  tb[6] = -7;
  Seq b(tb);
  ASSERT_TRUE(kv.allocate_slots(a.kv, a.tokens, 0, 5));
  ASSERT_TRUE(kv.allocate_slots(b.kv, b.tokens, 0, 9));
  EXPECT_FALSE(kv.pool().is_cached(b.kv.block_ids[0]));
  EXPECT_TRUE(kv.pool().is_cached(b.kv.block_ids[1]));
  auto tc = tb;
  tc.push_back(1);
  Seq c(tc);
  std::vector<int32_t> hit;
  EXPECT_EQ(kv.get_computed_blocks(c.kv, c.tokens, hit), 8);
  EXPECT_EQ(hit, (std::vector<int32_t>{a.kv.block_ids[0], b.kv.block_ids[1]}));
}

TEST(KVCacheManager, RejectsSlotsBeyondKnownTokens) {
  KVCacheManager kv(10, kBs, true);
  Seq a(seq_tokens(3));
  EXPECT_THROW(kv.allocate_slots(a.kv, a.tokens, 0, 4), std::logic_error);
}

}  // namespace
}  // namespace servesim
