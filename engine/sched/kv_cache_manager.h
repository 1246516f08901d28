// KVCacheManager: paged KV-cache bookkeeping for sequences over one BlockPool, as vLLM's
// vllm/v1/core/kv_cache_manager.py (single full-attention group).
//
//  - get_computed_blocks(): the longest cached prefix of a sequence's tokens, in full blocks,
//    never covering the last token (vLLM: max_cache_hit_length = num_tokens - 1, because the
//    last token must be recomputed to produce logits).
//  - allocate_slots(): blocks for the tokens a step computes; caches every block that becomes
//    full (speculatively, at allocation, as vLLM does); fails without side effects when the
//    pool cannot provide the blocks.
//  - free(): releases a sequence's blocks tail first, so the LRU evicts the tail before the
//    shared prefix; freed full blocks stay cached until reused.
//
// Per-sequence state lives in KVSequenceState, owned by the caller (the Scheduler's sequence
// slab) so its vectors keep their capacity when a slot is reused. Not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/sched/block_hash.h"
#include "engine/sched/block_pool.h"

namespace servesim {

struct KVSequenceState {
  std::vector<int32_t> block_ids;       // the block table, logical block i -> physical block
  int num_cached_blocks = 0;            // leading entries of block_ids already offered to the cache
  std::vector<BlockHash> block_hashes;  // chained hashes of the full token blocks seen so far
  BlockHash root;                       // parent of block 0 (from the salts)

  // Forgets everything (keeps capacity). `salt` combines hash_salt and the request's salt.
  void reset(uint64_t salt);
};

struct PrefixCacheStats {
  int64_t queries_tokens = 0;            // prompt tokens looked up at first admissions
  int64_t hit_tokens = 0;                // of those, tokens served from the cache
  int64_t preempted_queries_tokens = 0;  // the same for re-admissions after preemption
  int64_t preempted_hit_tokens = 0;
};

class KVCacheManager {
 public:
  // REQUIRES: num_gpu_blocks >= 2, block_size >= 1.
  KVCacheManager(int64_t num_gpu_blocks, int block_size, bool enable_prefix_caching);

  const BlockPool& pool() const { return pool_; }
  int block_size() const { return block_size_; }
  bool prefix_caching_enabled() const { return pool_.caching_enabled(); }

  // Blocks needed to hold `num_tokens` tokens.
  int blocks_for_tokens(int64_t num_tokens) const {
    return static_cast<int>((num_tokens + block_size_ - 1) / block_size_);
  }
  // Full blocks in `num_tokens` tokens (a shift for power-of-two block sizes).
  int full_blocks(int num_tokens) const {
    return block_shift_ >= 0 ? num_tokens >> block_shift_ : num_tokens / block_size_;
  }

  // Appends to `hit_blocks` (cleared first) the cached blocks holding the longest prefix of
  // `tokens` that is a whole number of blocks and shorter than tokens.size(). Returns the
  // number of tokens they hold. Touches nothing: pass the blocks to allocate_slots().
  // REQUIRES: state holds no blocks. 0 when prefix caching is off.
  int get_computed_blocks(KVSequenceState& state, std::span<const int32_t> tokens,
                          std::vector<int32_t>& hit_blocks);

  // Makes room for `num_new_tokens` tokens after `num_computed_tokens` computed ones plus the
  // `hit_blocks` prefix (only at admission, when the state holds no blocks). Returns false,
  // changing nothing, when the pool lacks free blocks. `tokens` are the sequence's tokens;
  // REQUIRES: num_computed_tokens + hit + num_new_tokens <= tokens.size().
  // num_lookahead_tokens: slots for speculative draft tokens after those, not yet known, so
  // never cached (vLLM allocate_slots' num_lookahead_tokens; cache up to request.num_tokens).
  bool allocate_slots(KVSequenceState& state, std::span<const int32_t> tokens,
                      int num_computed_tokens, int num_new_tokens,
                      std::span<const int32_t> hit_blocks = {}, int num_lookahead_tokens = 0);

  // Releases every block of the sequence, tail first; keeps its block hashes.
  void free(KVSequenceState& state);

  // Forgets the cache entries of the blocks at and after the one holding token
  // `num_computed_tokens`: allocate_slots() cached them for a step that will not run (the
  // sequence was preempted or aborted after being scheduled). Call before free().
  void uncache_uncomputed(KVSequenceState& state, int num_computed_tokens);

  // Record a lookup outcome (the Scheduler calls this once per admission).
  void record_prefix_lookup(int num_tokens, int hit_tokens, bool after_preemption);
  const PrefixCacheStats& prefix_stats() const { return stats_; }

  void check_invariants() const { pool_.check_invariants(); }

 private:
  // Extends state.block_hashes to cover `num_full_blocks` blocks of `tokens`.
  void ensure_hashes(KVSequenceState& state, std::span<const int32_t> tokens,
                     int num_full_blocks) const;

  BlockPool pool_;
  int block_size_;
  int block_shift_;  // log2(block_size) when a power of two, else -1
  PrefixCacheStats stats_;
};

}  // namespace servesim
