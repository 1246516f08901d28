#include "engine/sched/kv_cache_manager.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace servesim {

void KVSequenceState::reset(uint64_t salt) {
  block_ids.clear();
  block_hashes.clear();
  root = root_block_hash(salt);
  num_cached_blocks = 0;
}

KVCacheManager::KVCacheManager(int64_t num_gpu_blocks, int block_size, bool enable_prefix_caching)
    : pool_(num_gpu_blocks, block_size, enable_prefix_caching),
      block_size_(block_size),
      block_shift_(std::has_single_bit(static_cast<unsigned>(block_size))
                       ? std::countr_zero(static_cast<unsigned>(block_size))
                       : -1) {}

void KVCacheManager::ensure_hashes(KVSequenceState& state, std::span<const int32_t> tokens,
                                   int num_full_blocks) const {
  for (int i = static_cast<int>(state.block_hashes.size()); i < num_full_blocks; ++i) {
    const BlockHash& parent = i == 0 ? state.root : state.block_hashes[i - 1];
    state.block_hashes.push_back(hash_block_tokens(
        parent, tokens.data() + static_cast<size_t>(i) * block_size_, block_size_));
  }
}

int KVCacheManager::get_computed_blocks(KVSequenceState& state, std::span<const int32_t> tokens,
                                        std::vector<int32_t>& hit_blocks) {
  hit_blocks.clear();
  if (!pool_.caching_enabled() || tokens.empty()) return 0;
  // The last token is always recomputed to produce logits (vLLM max_cache_hit_length).
  const int max_blocks = static_cast<int>((tokens.size() - 1) / block_size_);
  ensure_hashes(state, tokens, max_blocks);
  const std::span<const BlockHash> hashes(state.block_hashes.data(), max_blocks);
  return pool_.lookup_prefix(hashes, tokens.data(), hit_blocks) * block_size_;
}

bool KVCacheManager::allocate_slots(KVSequenceState& state, std::span<const int32_t> tokens,
                                    int num_computed_tokens, int num_new_tokens,
                                    std::span<const int32_t> hit_blocks, int num_lookahead_tokens) {
  const int num_hit = static_cast<int>(hit_blocks.size());
  // Sequences are shorter than max_model_len (an int), so int arithmetic cannot overflow.
  const int total = num_computed_tokens + num_hit * block_size_ + num_new_tokens;
  if (total > static_cast<int>(tokens.size())) {
    throw std::logic_error("KVCacheManager::allocate_slots: slots beyond the known tokens");
  }
  if (num_hit > 0 && !state.block_ids.empty()) {
    throw std::logic_error("KVCacheManager::allocate_slots: prefix hit on a sequence with blocks");
  }
  const int have = static_cast<int>(state.block_ids.size());
  const int full = full_blocks(total);
  const int needed = num_lookahead_tokens == 0 ? full + (full * block_size_ != total ? 1 : 0)
                                               : blocks_for_tokens(total + num_lookahead_tokens);
  const int to_allocate = std::max(0, needed - have - num_hit);
  const int cacheable = pool_.caching_enabled() ? full : 0;
  if (to_allocate == 0 && num_hit == 0 && cacheable <= state.num_cached_blocks) {
    return true;  // the common decode step: the current block has room
  }
  if (to_allocate > 0) {
    // Hit blocks that sit in the free queue stop being allocatable once touched.
    int evictable_hits = 0;
    for (int32_t b : hit_blocks) evictable_hits += pool_.ref_count(b) == 0 ? 1 : 0;
    if (to_allocate > pool_.num_free_blocks() - evictable_hits) return false;
  }
  for (int32_t b : hit_blocks) {
    pool_.touch(b);
    state.block_ids.push_back(b);
  }
  if (num_hit > 0) state.num_cached_blocks = num_hit;
  if (to_allocate > 0) pool_.allocate(to_allocate, state.block_ids);
  if (cacheable > state.num_cached_blocks) {
    // Cache the blocks this step fills (vLLM caches them at allocation time).
    ensure_hashes(state, tokens, cacheable);
    for (int i = state.num_cached_blocks; i < cacheable; ++i) {
      pool_.cache_block(state.block_ids[i], state.block_hashes[i],
                        tokens.data() + static_cast<size_t>(i) * block_size_);
    }
    state.num_cached_blocks = cacheable;
  }
  return true;
}

void KVCacheManager::free(KVSequenceState& state) {
  // Tail first: the LRU queue then evicts a sequence's last blocks before its prefix.
  for (auto it = state.block_ids.rbegin(); it != state.block_ids.rend(); ++it) {
    pool_.release(*it);
  }
  state.block_ids.clear();
  state.num_cached_blocks = 0;
}

void KVCacheManager::uncache_uncomputed(KVSequenceState& state, int num_computed_tokens) {
  const int first = num_computed_tokens / block_size_;
  for (int i = first; i < state.num_cached_blocks; ++i) pool_.drop_cached(state.block_ids[i]);
  state.num_cached_blocks = std::min(state.num_cached_blocks, first);
}

void KVCacheManager::record_prefix_lookup(int num_tokens, int hit_tokens, bool after_preemption) {
  if (after_preemption) {
    stats_.preempted_queries_tokens += num_tokens;
    stats_.preempted_hit_tokens += hit_tokens;
  } else {
    stats_.queries_tokens += num_tokens;
    stats_.hit_tokens += hit_tokens;
  }
}

}  // namespace servesim
