// HostKvTier: the host-memory KV tier's states (pending, ready, pinned), its LRU eviction and
// its all-or-nothing stores.
#include "engine/sched/host_kv_tier.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace servesim {
namespace {

std::vector<BlockHash> hashes(uint64_t first, int n) {
  std::vector<BlockHash> out;
  for (int i = 0; i < n; ++i) out.push_back(BlockHash{first + i, ~(first + i)});
  return out;
}

TEST(HostKvTier, StoredBlocksAreLoadableOnlyOnceTheStoreCompletes) {
  HostKvTier tier(4);
  const std::vector<BlockHash> h = hashes(10, 3);
  std::vector<BlockHash> entered;
  EXPECT_EQ(tier.prepare_store(h, entered), 3);
  EXPECT_EQ(entered.size(), 3u);
  EXPECT_EQ(tier.num_used_blocks(), 3);
  EXPECT_EQ(tier.lookup(h), 0);  // pending: the copy is still in flight
  EXPECT_TRUE(tier.is_pending(h[0]));
  tier.complete_store(h);
  EXPECT_EQ(tier.lookup(h), 3);
  EXPECT_TRUE(tier.is_ready(h[2]));
  tier.check_invariants();
}

TEST(HostKvTier, LookupCountsOnlyTheLeadingRun) {
  HostKvTier tier(8);
  std::vector<BlockHash> h = hashes(1, 4);
  std::vector<BlockHash> entered;
  tier.prepare_store(std::vector<BlockHash>{h[0], h[1], h[3]}, entered);
  tier.complete_store(entered);
  EXPECT_EQ(tier.lookup(h), 2);  // h[2] is missing, so h[3] does not count
}

TEST(HostKvTier, HeldHashesAreNotStoredTwice) {
  HostKvTier tier(4);
  const std::vector<BlockHash> h = hashes(5, 2);
  std::vector<BlockHash> entered;
  EXPECT_EQ(tier.prepare_store(h, entered), 2);
  EXPECT_EQ(tier.prepare_store(h, entered), 0);  // pending ones count as held
  tier.complete_store(h);
  EXPECT_EQ(tier.prepare_store(hashes(5, 3), entered), 1);
  EXPECT_EQ(entered.size(), 3u);
  tier.check_invariants();
}

TEST(HostKvTier, EvictsTheLeastRecentlyUsedReadyBlock) {
  HostKvTier tier(3);
  std::vector<BlockHash> entered;
  const std::vector<BlockHash> a = hashes(100, 1), b = hashes(200, 1), c = hashes(300, 1);
  for (const auto* h : {&a, &b, &c}) {
    tier.prepare_store(*h, entered);
    tier.complete_store(*h);
  }
  EXPECT_EQ(tier.lookup(a), 1);  // a becomes the most recent; b is now the oldest
  EXPECT_EQ(tier.prepare_store(hashes(400, 1), entered), 1);
  EXPECT_EQ(tier.num_evictions(), 1u);
  EXPECT_EQ(tier.lookup(b), 0);
  EXPECT_EQ(tier.lookup(a), 1);
  EXPECT_EQ(tier.lookup(c), 1);
  tier.check_invariants();
}

TEST(HostKvTier, AStoreNeverEvictsTheBlocksItHolds) {
  HostKvTier tier(2);
  std::vector<BlockHash> entered;
  const std::vector<BlockHash> a = hashes(1, 1), b = hashes(2, 1), c = hashes(3, 1);
  for (const auto* h : {&a, &b}) {
    tier.prepare_store(*h, entered);
    tier.complete_store(*h);
  }
  // a is the least recently used block, and the store holds it: b goes for c.
  EXPECT_EQ(tier.prepare_store(std::vector<BlockHash>{a[0], c[0]}, entered), 1);
  EXPECT_TRUE(tier.is_ready(a[0]));
  EXPECT_FALSE(tier.is_ready(b[0]));
  EXPECT_TRUE(tier.is_pending(c[0]));
  // Holding both blocks leaves no room for two new ones.
  tier.complete_store(c);
  EXPECT_EQ(tier.prepare_store(std::vector<BlockHash>{a[0], c[0], hashes(4, 1)[0]}, entered), -1);
  tier.check_invariants();
}

TEST(HostKvTier, PinnedAndPendingBlocksAreNeverEvicted) {
  HostKvTier tier(2);
  std::vector<BlockHash> entered;
  const std::vector<BlockHash> a = hashes(1, 1), b = hashes(2, 1);
  tier.prepare_store(a, entered);
  tier.complete_store(a);
  tier.pin(a);
  tier.prepare_store(b, entered);  // pending
  // Full of a pinned and a pending block: a store finds no room and changes nothing.
  EXPECT_EQ(tier.prepare_store(hashes(3, 1), entered), -1);
  EXPECT_EQ(entered.size(), 2u);
  EXPECT_EQ(tier.num_evictions(), 0u);
  tier.unpin(a);
  EXPECT_EQ(tier.prepare_store(hashes(3, 1), entered), 1);
  EXPECT_EQ(tier.lookup(a), 0);  // a, once unpinned, was the only evictable block
  tier.check_invariants();
}

TEST(HostKvTier, StoresAreAllOrNothing) {
  HostKvTier tier(3);
  std::vector<BlockHash> entered;
  EXPECT_EQ(tier.prepare_store(hashes(1, 4), entered), -1);
  EXPECT_TRUE(entered.empty());
  EXPECT_EQ(tier.num_used_blocks(), 0);
}

TEST(HostKvTier, CancelledStoresFreeTheirBlocks) {
  HostKvTier tier(2);
  std::vector<BlockHash> entered;
  const std::vector<BlockHash> h = hashes(7, 2);
  tier.prepare_store(h, entered);
  tier.complete_store(std::vector<BlockHash>{h[0]});
  tier.cancel_store(h);  // only the pending one goes
  EXPECT_EQ(tier.num_used_blocks(), 1);
  EXPECT_TRUE(tier.is_ready(h[0]));
  EXPECT_FALSE(tier.is_pending(h[1]));
  tier.complete_store(h);  // a late completion of the cancelled store is ignored
  EXPECT_EQ(tier.lookup(h), 1);
  tier.check_invariants();
}

TEST(HostKvTier, MisuseThrows) {
  HostKvTier tier(2);
  const std::vector<BlockHash> h = hashes(1, 1);
  EXPECT_THROW(tier.pin(h), std::logic_error);
  EXPECT_THROW(tier.unpin(h), std::logic_error);
  EXPECT_THROW(HostKvTier(-1), std::invalid_argument);
  HostKvTier off(0);
  std::vector<BlockHash> entered;
  EXPECT_FALSE(off.enabled());
  EXPECT_EQ(off.prepare_store(h, entered), -1);
  EXPECT_EQ(off.lookup(h), 0);
}

}  // namespace
}  // namespace servesim
