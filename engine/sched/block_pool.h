// BlockPool: the KV blocks of one cache, their reference counts, the LRU queue of free blocks
// and the prefix-cache map (vLLM vllm/v1/core/block_pool.py + FreeKVCacheBlockQueue).
//
// Invariants (check_invariants() verifies them all):
//  1. Block 0 is the reserved null block: never free, never allocated, never cached.
//  2. Every other block is either in use (ref_count > 0) or in the free queue (ref_count 0):
//     num_used_blocks() + num_free_blocks() == num_usable_blocks() == num_blocks() - 1.
//  3. A free block may still be cached (it keeps its hash and tokens until it is reused):
//     num_free_blocks() counts it, num_cached_free_blocks() says how many such blocks exist.
//  4. The map holds at most one block per hash; a block is in the map iff is_cached().
//  5. The free queue is LRU-ordered: allocate() pops from the head, free() appends at the
//     tail, so callers free a sequence's blocks tail first (KVCacheManager::free does).
//
// The free queue is a doubly linked list threaded through two index arrays (no node
// allocation). All operations are O(1) per block, lookups O(block_size). Not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/sched/block_hash.h"
#include "engine/sched/flat_id_map.h"

namespace servesim {

class BlockPool {
 public:
  static constexpr int32_t kNullBlock = 0;

  // REQUIRES: num_blocks >= 2, block_size >= 1. Token storage for verification of prefix hits
  // (block_size int32 per block) is allocated only when enable_caching is true.
  BlockPool(int64_t num_blocks, int block_size, bool enable_caching);

  int32_t num_blocks() const { return num_blocks_; }
  int32_t num_usable_blocks() const { return num_blocks_ - 1; }
  int block_size() const { return block_size_; }
  bool caching_enabled() const { return caching_; }

  int32_t num_free_blocks() const { return num_free_; }
  int32_t num_used_blocks() const { return num_usable_blocks() - num_free_; }
  int32_t num_cached_blocks() const { return static_cast<int32_t>(map_.size()); }
  int32_t num_cached_free_blocks() const { return num_cached_free_; }
  // Fraction of usable blocks in use (vLLM BlockPool.get_usage()).
  double usage() const {
    return static_cast<double>(num_used_blocks()) / static_cast<double>(num_usable_blocks());
  }
  // Cached blocks evicted (hash dropped) because allocate() reused them.
  uint64_t num_evictions() const { return num_evictions_; }

  int32_t ref_count(int32_t block) const { return meta_[block].ref; }
  bool is_cached(int32_t block) const { return meta_[block].cached != 0; }
  const BlockHash& block_hash(int32_t block) const { return meta_[block].hash; }

  // Pops `n` blocks from the head of the free queue (evicting their cache entries), sets
  // their ref_count to 1 and appends them to `out`. REQUIRES: n <= num_free_blocks().
  void allocate(int n, std::vector<int32_t>& out);

  // Takes one more reference to `block` (a prefix-cache hit); a free block leaves the queue.
  void touch(int32_t block);

  // Drops one reference; at zero the block goes to the tail of the free queue, keeping its
  // cache entry. REQUIRES: ref_count(block) > 0.
  void release(int32_t block);

  // The cached block with hash `h` whose tokens equal `tokens` (block_size ids), or -1.
  int32_t lookup(const BlockHash& h, const int32_t* tokens) const;

  // Appends to `out` the cached blocks of the longest run of leading `hashes` that all hit,
  // block i verified against tokens[i * block_size, (i + 1) * block_size) as lookup() does;
  // returns how many. Same result as calling lookup() in order until the first -1, but each
  // hit costs three dependent loads (map slot, block record, stored tokens) that usually miss
  // the cache, so they are issued for all blocks before any is checked.
  int lookup_prefix(std::span<const BlockHash> hashes, const int32_t* tokens,
                    std::vector<int32_t>& out) const;

  // Enters `block` (in use, full, not cached) into the cache under `h` with its token ids.
  // If another block already holds `h` the cache keeps that one and `block` stays uncached.
  void cache_block(int32_t block, const BlockHash& h, const int32_t* tokens);

  // Drops the cache entry of `block` (in use) whose KV will not be computed after all.
  void drop_cached(int32_t block) {
    if (meta_[block].cached) uncache(block);
  }

  // The free blocks in queue order, head (next to be evicted) first. O(num_blocks).
  std::vector<int32_t> free_queue_snapshot() const;

  // Throws std::logic_error naming the first broken invariant. O(num_blocks).
  void check_invariants() const;

 private:
  void queue_remove(int32_t block);
  void queue_push_back(int32_t block);
  void uncache(int32_t block);
  const int32_t* stored_tokens(int32_t block) const {
    return &tokens_[static_cast<size_t>(block) * block_size_];
  }

  // Everything the pool keeps per block, in one 32-byte record so that touching a block
  // costs one cache line. The free queue is threaded through prev/next; index num_blocks_
  // is its sentinel.
  struct Meta {
    int32_t ref = 0;
    int32_t prev = 0;
    int32_t next = 0;
    uint8_t cached = 0;
    BlockHash hash;
  };

  int32_t num_blocks_;
  int block_size_;
  bool caching_;
  int32_t num_free_ = 0;
  int32_t num_cached_free_ = 0;
  uint64_t num_evictions_ = 0;
  std::vector<Meta> meta_;
  std::vector<int32_t> tokens_;  // block_size ids per block, for verifying hits
  FlatIdMap map_;                // hash.lo -> block
};

}  // namespace servesim
