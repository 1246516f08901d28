#include "engine/sched/block_pool.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace servesim {

BlockPool::BlockPool(int64_t num_blocks, int block_size, bool enable_caching)
    : num_blocks_(static_cast<int32_t>(num_blocks)),
      block_size_(block_size),
      caching_(enable_caching),
      map_(enable_caching ? static_cast<size_t>(num_blocks) : 0) {
  if (num_blocks < 2 || num_blocks > (int64_t{1} << 30) || block_size < 1) {
    throw std::invalid_argument("BlockPool: need 2 <= num_blocks <= 2^30 and block_size >= 1");
  }
  meta_.assign(static_cast<size_t>(num_blocks_) + 1, Meta{});
  if (caching_) tokens_.assign(static_cast<size_t>(num_blocks_) * block_size_, 0);
  // The queue starts as 1, 2, ..., num_blocks_ - 1.
  const int32_t sentinel = num_blocks_;
  meta_[sentinel].prev = meta_[sentinel].next = sentinel;
  for (int32_t b = 1; b < num_blocks_; ++b) queue_push_back(b);
  meta_[kNullBlock].ref = 1;  // pinned forever; never in the queue
  num_free_ = num_blocks_ - 1;
}

void BlockPool::queue_remove(int32_t block) {
  const Meta& m = meta_[block];
  meta_[m.prev].next = m.next;
  meta_[m.next].prev = m.prev;
}

void BlockPool::queue_push_back(int32_t block) {
  Meta& sentinel = meta_[num_blocks_];
  const int32_t last = sentinel.prev;
  meta_[last].next = block;
  meta_[block].prev = last;
  meta_[block].next = num_blocks_;
  sentinel.prev = block;
}

void BlockPool::uncache(int32_t block) {
  map_.erase(meta_[block].hash.lo, block);
  meta_[block].cached = 0;
}

void BlockPool::allocate(int n, std::vector<int32_t>& out) {
  if (n > num_free_) throw std::logic_error("BlockPool::allocate: not enough free blocks");
  for (int i = 0; i < n; ++i) {
    const int32_t block = meta_[num_blocks_].next;
    queue_remove(block);
    Meta& m = meta_[block];
    if (m.cached) {  // vLLM _maybe_evict_cached_block
      uncache(block);
      --num_cached_free_;
      ++num_evictions_;
    }
    m.ref = 1;
    out.push_back(block);
  }
  num_free_ -= n;
}

void BlockPool::touch(int32_t block) {
  Meta& m = meta_[block];
  if (m.ref++ == 0) {
    queue_remove(block);
    --num_free_;
    if (m.cached) --num_cached_free_;
  }
}

void BlockPool::release(int32_t block) {
  Meta& m = meta_[block];
  if (--m.ref == 0) {
    queue_push_back(block);
    ++num_free_;
    if (m.cached) ++num_cached_free_;
  }
}

int32_t BlockPool::lookup(const BlockHash& h, const int32_t* tokens) const {
  if (!caching_) return -1;
  const int32_t block = map_.find(h.lo);
  if (block < 0) return -1;
  if (meta_[block].hash.hi != h.hi) return -1;
  if (std::memcmp(stored_tokens(block), tokens, sizeof(int32_t) * block_size_) != 0) return -1;
  return block;
}

int BlockPool::lookup_prefix(std::span<const BlockHash> hashes, const int32_t* tokens,
                             std::vector<int32_t>& out) const {
  if (!caching_) return 0;
  for (const BlockHash& h : hashes) map_.prefetch(h.lo);
  const size_t first = out.size();
  const size_t token_bytes = sizeof(int32_t) * block_size_;
  for (const BlockHash& h : hashes) {
    const int32_t block = map_.find(h.lo);
    if (block < 0) break;
    __builtin_prefetch(&meta_[block]);
    const char* stored = reinterpret_cast<const char*>(stored_tokens(block));
    __builtin_prefetch(stored);
    __builtin_prefetch(stored + token_bytes - 1);
    out.push_back(block);
  }
  size_t i = first;
  for (; i < out.size(); ++i) {
    const size_t n = i - first;
    const int32_t block = out[i];
    if (meta_[block].hash.hi != hashes[n].hi) break;
    if (std::memcmp(stored_tokens(block), tokens + n * block_size_, token_bytes) != 0) break;
  }
  out.resize(i);
  return static_cast<int>(i - first);
}

void BlockPool::cache_block(int32_t block, const BlockHash& h, const int32_t* tokens) {
  Meta& m = meta_[block];
  if (!caching_ || m.cached) return;
  if (!map_.insert(h.lo, block)) return;  // another block already serves this hash
  m.cached = 1;
  m.hash = h;
  std::memcpy(&tokens_[static_cast<size_t>(block) * block_size_], tokens,
              sizeof(int32_t) * block_size_);
  if (m.ref == 0) ++num_cached_free_;
}

std::vector<int32_t> BlockPool::free_queue_snapshot() const {
  std::vector<int32_t> out;
  for (int32_t b = meta_[num_blocks_].next; b != num_blocks_; b = meta_[b].next) out.push_back(b);
  return out;
}

void BlockPool::check_invariants() const {
  auto fail = [](const std::string& what) {
    throw std::logic_error("BlockPool invariant broken: " + what);
  };
  if (meta_[kNullBlock].ref != 1 || meta_[kNullBlock].cached) fail("null block 0 is not pinned");
  std::vector<uint8_t> in_queue(num_blocks_, 0);
  int32_t queued = 0;
  int32_t cached_free = 0;
  for (int32_t b = meta_[num_blocks_].next, prev = num_blocks_; b != num_blocks_;
       prev = b, b = meta_[b].next) {
    if (b <= 0 || b >= num_blocks_) fail("bad block index in the free queue");
    if (meta_[b].prev != prev) fail("free queue links disagree at block " + std::to_string(b));
    if (in_queue[b]) fail("block " + std::to_string(b) + " twice in the free queue");
    in_queue[b] = 1;
    if (meta_[b].ref != 0) fail("block " + std::to_string(b) + " is queued with ref_count > 0");
    if (meta_[b].cached) ++cached_free;
    if (++queued > num_blocks_) fail("free queue is cyclic");
  }
  if (queued != num_free_) fail("num_free_ disagrees with the free queue");
  if (cached_free != num_cached_free_) fail("num_cached_free_ disagrees with the free queue");
  int32_t used = 0;
  int32_t cached = 0;
  for (int32_t b = 1; b < num_blocks_; ++b) {
    const Meta& m = meta_[b];
    if (m.ref < 0) fail("negative ref_count at block " + std::to_string(b));
    if (m.ref > 0) ++used;
    if (m.ref == 0 && !in_queue[b]) fail("free block " + std::to_string(b) + " not queued");
    if (m.cached) {
      ++cached;
      if (map_.find(m.hash.lo) != b) fail("cached block " + std::to_string(b) + " not in map");
    }
  }
  if (used + queued != num_usable_blocks()) fail("used + free != usable blocks");
  if (static_cast<size_t>(cached) != map_.size()) fail("map size disagrees with cached blocks");
}

}  // namespace servesim
