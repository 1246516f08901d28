// BlockPool, FlatIdMap and WaitingQueue: the data structures under the KV-cache manager.
#include "engine/sched/block_pool.h"

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <random>
#include <vector>

#include "engine/sched/flat_id_map.h"
#include "engine/sched/waiting_queue.h"

namespace servesim {
namespace {

std::vector<int32_t> tokens_of(int32_t base, int n) {
  std::vector<int32_t> t(n);
  std::iota(t.begin(), t.end(), base);
  return t;
}

TEST(BlockPool, NullBlockIsReservedAndNeverAllocated) {
  BlockPool pool(5, 4, true);
  EXPECT_EQ(pool.num_usable_blocks(), 4);
  EXPECT_EQ(pool.num_free_blocks(), 4);
  std::vector<int32_t> got;
  pool.allocate(4, got);
  EXPECT_EQ(got, (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(pool.num_free_blocks(), 0);
  EXPECT_EQ(pool.num_used_blocks(), 4);
  EXPECT_DOUBLE_EQ(pool.usage(), 1.0);
  EXPECT_THROW(pool.allocate(1, got), std::logic_error);
  pool.check_invariants();
}

TEST(BlockPool, FreedBlocksGoToTheTailInTheOrderGiven) {
  BlockPool pool(6, 4, false);
  std::vector<int32_t> got;
  pool.allocate(3, got);  // 1 2 3; queue now 4 5
  pool.release(3);
  pool.release(1);
  EXPECT_EQ(pool.free_queue_snapshot(), (std::vector<int32_t>{4, 5, 3, 1}));
  got.clear();
  pool.allocate(3, got);
  EXPECT_EQ(got, (std::vector<int32_t>{4, 5, 3}));
  pool.check_invariants();
}

TEST(BlockPool, RefCountsShareABlock) {
  BlockPool pool(4, 2, true);
  std::vector<int32_t> got;
  pool.allocate(1, got);
  pool.touch(got[0]);
  EXPECT_EQ(pool.ref_count(got[0]), 2);
  pool.release(got[0]);
  EXPECT_EQ(pool.num_free_blocks(), 2);
  pool.release(got[0]);
  EXPECT_EQ(pool.num_free_blocks(), 3);
  pool.check_invariants();
}

TEST(BlockPool, CachedBlockIsFoundOnlyWithEqualHashAndTokens) {
  BlockPool pool(4, 4, true);
  std::vector<int32_t> got;
  pool.allocate(1, got);
  const auto t = tokens_of(10, 4);
  const BlockHash h = hash_block_tokens(root_block_hash(0), t.data(), 4);
  pool.cache_block(got[0], h, t.data());
  EXPECT_TRUE(pool.is_cached(got[0]));
  EXPECT_EQ(pool.lookup(h, t.data()), got[0]);
  // A forged collision: same hash, other tokens -> no hit.
  const auto other = tokens_of(99, 4);
  EXPECT_EQ(pool.lookup(h, other.data()), -1);
  // Same lo lane, different hi lane -> no hit.
  EXPECT_EQ(pool.lookup(BlockHash{h.lo, h.hi ^ 1}, t.data()), -1);
  pool.check_invariants();
}

// lookup_prefix() stops where lookup() first fails: at a map miss, a hi-lane mismatch or a
// token mismatch, whichever comes first; and appends after what `out` already holds.
TEST(BlockPool, LookupPrefixStopsWhereLookupFirstFails) {
  constexpr int kBlocks = 6;
  BlockPool pool(kBlocks + 2, 4, true);
  std::vector<int32_t> got;
  pool.allocate(kBlocks, got);
  const auto t = tokens_of(100, 4 * kBlocks);
  std::vector<BlockHash> h;
  BlockHash parent = root_block_hash(7);
  for (int i = 0; i < kBlocks; ++i) {
    h.push_back(parent = hash_block_tokens(parent, t.data() + 4 * i, 4));
    if (i != 4) pool.cache_block(got[i], h[i], t.data() + 4 * i);
  }
  std::vector<int32_t> out = {42};
  EXPECT_EQ(pool.lookup_prefix(h, t.data(), out), 4);  // block 4 is not cached
  EXPECT_EQ(out, (std::vector<int32_t>{42, got[0], got[1], got[2], got[3]}));
  auto other = t;
  other[4 * 2 + 1] = -5;  // block 2's tokens differ from the stored ones
  out.clear();
  EXPECT_EQ(pool.lookup_prefix(h, other.data(), out), 2);
  EXPECT_EQ(out, (std::vector<int32_t>{got[0], got[1]}));
  auto forged = h;
  forged[1].hi ^= 1;  // block 1: same lo lane, other hi lane
  out.clear();
  EXPECT_EQ(pool.lookup_prefix(forged, t.data(), out), 1);
  EXPECT_EQ(out, (std::vector<int32_t>{got[0]}));
  BlockPool off(4, 4, false);
  EXPECT_EQ(off.lookup_prefix(h, t.data(), out), 0);
}

TEST(BlockPool, FreeCachedBlockStaysCachedUntilReused) {
  BlockPool pool(3, 2, true);  // two usable blocks
  std::vector<int32_t> got;
  pool.allocate(2, got);
  const auto t = tokens_of(1, 2);
  const BlockHash h = hash_block_tokens(root_block_hash(0), t.data(), 2);
  pool.cache_block(got[0], h, t.data());
  pool.release(got[0]);
  EXPECT_EQ(pool.num_cached_free_blocks(), 1);
  EXPECT_EQ(pool.lookup(h, t.data()), got[0]);
  // A hit on the free block takes it out of the free queue.
  pool.touch(got[0]);
  EXPECT_EQ(pool.num_free_blocks(), 0);
  EXPECT_EQ(pool.num_cached_free_blocks(), 0);
  pool.release(got[0]);
  // Reuse evicts it.
  std::vector<int32_t> again;
  pool.allocate(1, again);
  EXPECT_EQ(again[0], got[0]);
  EXPECT_FALSE(pool.is_cached(got[0]));
  EXPECT_EQ(pool.lookup(h, t.data()), -1);
  EXPECT_EQ(pool.num_evictions(), 1u);
  pool.check_invariants();
}

TEST(BlockPool, DuplicateHashKeepsTheFirstBlock) {
  BlockPool pool(4, 2, true);
  std::vector<int32_t> got;
  pool.allocate(2, got);
  const auto t = tokens_of(5, 2);
  const BlockHash h = hash_block_tokens(root_block_hash(0), t.data(), 2);
  pool.cache_block(got[0], h, t.data());
  pool.cache_block(got[1], h, t.data());
  EXPECT_TRUE(pool.is_cached(got[0]));
  EXPECT_FALSE(pool.is_cached(got[1]));
  EXPECT_EQ(pool.num_cached_blocks(), 1);
  pool.check_invariants();
}

TEST(BlockPool, CachingOffNeverCaches) {
  BlockPool pool(3, 2, false);
  std::vector<int32_t> got;
  pool.allocate(1, got);
  const auto t = tokens_of(5, 2);
  const BlockHash h = hash_block_tokens(root_block_hash(0), t.data(), 2);
  pool.cache_block(got[0], h, t.data());
  EXPECT_FALSE(pool.is_cached(got[0]));
  EXPECT_EQ(pool.lookup(h, t.data()), -1);
}

TEST(BlockHash, ChainsOverParentAndSalt) {
  const auto t = tokens_of(0, 16);
  const BlockHash a = hash_block_tokens(root_block_hash(0), t.data(), 16);
  EXPECT_EQ(a, hash_block_tokens(root_block_hash(0), t.data(), 16));  // deterministic
  EXPECT_NE(a, hash_block_tokens(root_block_hash(1), t.data(), 16));  // salt
  EXPECT_NE(hash_block_tokens(a, t.data(), 16), a);                   // parent
  auto u = t;
  u[15] = 1000;
  EXPECT_NE(a, hash_block_tokens(root_block_hash(0), u.data(), 16));
}

TEST(FlatIdMap, MatchesStdMapUnderRandomInsertAndErase) {
  FlatIdMap m(4);
  std::map<uint64_t, int32_t> ref;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const uint64_t key = rng() % 5000;  // many collisions of probe runs
    if (rng() % 3 == 0) {
      EXPECT_EQ(m.erase(key), ref.erase(key) == 1);
    } else {
      const int32_t v = static_cast<int32_t>(rng() % 1000);
      const bool inserted = ref.emplace(key, v).second;
      EXPECT_EQ(m.insert(key, v), inserted);
    }
    if (i % 1000 == 0) {
      for (uint64_t k = 0; k < 5000; ++k) {
        auto it = ref.find(k);
        ASSERT_EQ(m.find(k), it == ref.end() ? FlatIdMap::kNotFound : it->second);
      }
    }
  }
  EXPECT_EQ(m.size(), ref.size());
}

TEST(FlatIdMap, EraseWithValueOnlyRemovesThatMapping) {
  FlatIdMap m;
  m.insert(42, 7);
  EXPECT_FALSE(m.erase(42, 8));
  EXPECT_EQ(m.find(42), 7);
  EXPECT_TRUE(m.erase(42, 7));
  EXPECT_EQ(m.find(42), FlatIdMap::kNotFound);
}

TEST(WaitingQueue, FcfsPrependsPreempted) {
  WaitingQueue q(QueueOrder::kFcfs);
  for (int32_t s = 0; s < 40; ++s) q.add(s, WaitingKey{});  // grows the ring
  q.prepend(100, WaitingKey{});
  EXPECT_EQ(q.pop_front(), 100);
  EXPECT_TRUE(q.erase(5));
  EXPECT_FALSE(q.erase(5));
  std::vector<int32_t> order;
  while (!q.empty()) order.push_back(q.pop_front());
  std::vector<int32_t> expected;
  for (int32_t s = 0; s < 40; ++s) {
    if (s != 5) expected.push_back(s);
  }
  EXPECT_EQ(order, expected);
}

TEST(WaitingQueue, PriorityOrdersByPriorityThenArrival) {
  WaitingQueue q(QueueOrder::kPriority);
  q.add(0, WaitingKey{1, 0.0, 0});
  q.add(1, WaitingKey{0, 2.0, 1});
  q.add(2, WaitingKey{0, 1.0, 2});
  q.add(3, WaitingKey{0, 1.0, 3});
  q.prepend(4, WaitingKey{2, 0.0, 4});  // a preempted low-priority request is not put first
  EXPECT_TRUE(q.erase(3));
  std::vector<int32_t> order;
  while (!q.empty()) order.push_back(q.pop_front());
  EXPECT_EQ(order, (std::vector<int32_t>{2, 1, 0, 4}));
}

}  // namespace
}  // namespace servesim
