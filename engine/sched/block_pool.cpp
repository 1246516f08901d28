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
  ref_.assign(num_blocks_, 0);
  cached_.assign(num_blocks_, 0);
  hash_.assign(num_blocks_, BlockHash{});
  if (caching_) tokens_.assign(static_cast<size_t>(num_blocks_) * block_size_, 0);
  // The sentinel is index num_blocks_; the queue starts as 1, 2, ..., num_blocks_ - 1.
  prev_.assign(num_blocks_ + 1, 0);
  next_.assign(num_blocks_ + 1, 0);
  const int32_t sentinel = num_blocks_;
  prev_[sentinel] = next_[sentinel] = sentinel;
  for (int32_t b = 1; b < num_blocks_; ++b) queue_push_back(b);
  ref_[kNullBlock] = 1;  // pinned forever; never in the queue
  num_free_ = num_blocks_ - 1;
}

void BlockPool::queue_remove(int32_t block) {
  next_[prev_[block]] = next_[block];
  prev_[next_[block]] = prev_[block];
}

void BlockPool::queue_push_back(int32_t block) {
  const int32_t sentinel = num_blocks_;
  const int32_t last = prev_[sentinel];
  next_[last] = block;
  prev_[block] = last;
  next_[block] = sentinel;
  prev_[sentinel] = block;
}

void BlockPool::uncache(int32_t block) {
  map_.erase(hash_[block].lo, block);
  cached_[block] = 0;
}

void BlockPool::allocate(int n, std::vector<int32_t>& out) {
  if (n > num_free_) throw std::logic_error("BlockPool::allocate: not enough free blocks");
  const int32_t sentinel = num_blocks_;
  for (int i = 0; i < n; ++i) {
    const int32_t block = next_[sentinel];
    queue_remove(block);
    if (cached_[block]) {  // vLLM _maybe_evict_cached_block
      uncache(block);
      --num_cached_free_;
      ++num_evictions_;
    }
    ref_[block] = 1;
    out.push_back(block);
  }
  num_free_ -= n;
}

void BlockPool::touch(int32_t block) {
  if (ref_[block]++ == 0) {
    queue_remove(block);
    --num_free_;
    if (cached_[block]) --num_cached_free_;
  }
}

void BlockPool::release(int32_t block) {
  if (--ref_[block] == 0) {
    queue_push_back(block);
    ++num_free_;
    if (cached_[block]) ++num_cached_free_;
  }
}

int32_t BlockPool::lookup(const BlockHash& h, const int32_t* tokens) const {
  if (!caching_) return -1;
  const int32_t block = map_.find(h.lo);
  if (block < 0) return -1;
  if (hash_[block].hi != h.hi) return -1;
  const int32_t* stored = &tokens_[static_cast<size_t>(block) * block_size_];
  if (std::memcmp(stored, tokens, sizeof(int32_t) * block_size_) != 0) return -1;
  return block;
}

void BlockPool::cache_block(int32_t block, const BlockHash& h, const int32_t* tokens) {
  if (!caching_ || cached_[block]) return;
  if (!map_.insert(h.lo, block)) return;  // another block already serves this hash
  cached_[block] = 1;
  hash_[block] = h;
  std::memcpy(&tokens_[static_cast<size_t>(block) * block_size_], tokens,
              sizeof(int32_t) * block_size_);
  if (ref_[block] == 0) ++num_cached_free_;
}

std::vector<int32_t> BlockPool::free_queue_snapshot() const {
  std::vector<int32_t> out;
  for (int32_t b = next_[num_blocks_]; b != num_blocks_; b = next_[b]) out.push_back(b);
  return out;
}

void BlockPool::check_invariants() const {
  auto fail = [](const std::string& what) {
    throw std::logic_error("BlockPool invariant broken: " + what);
  };
  if (ref_[kNullBlock] != 1 || cached_[kNullBlock]) fail("null block 0 is not pinned");
  std::vector<uint8_t> in_queue(num_blocks_, 0);
  int32_t queued = 0;
  int32_t cached_free = 0;
  for (int32_t b = next_[num_blocks_], prev = num_blocks_; b != num_blocks_;
       prev = b, b = next_[b]) {
    if (b <= 0 || b >= num_blocks_) fail("bad block index in the free queue");
    if (prev_[b] != prev) fail("free queue links disagree at block " + std::to_string(b));
    if (in_queue[b]) fail("block " + std::to_string(b) + " twice in the free queue");
    in_queue[b] = 1;
    if (ref_[b] != 0) fail("block " + std::to_string(b) + " is queued with ref_count > 0");
    if (cached_[b]) ++cached_free;
    if (++queued > num_blocks_) fail("free queue is cyclic");
  }
  if (queued != num_free_) fail("num_free_ disagrees with the free queue");
  if (cached_free != num_cached_free_) fail("num_cached_free_ disagrees with the free queue");
  int32_t used = 0;
  int32_t cached = 0;
  for (int32_t b = 1; b < num_blocks_; ++b) {
    if (ref_[b] < 0) fail("negative ref_count at block " + std::to_string(b));
    if (ref_[b] > 0) ++used;
    if (ref_[b] == 0 && !in_queue[b]) fail("free block " + std::to_string(b) + " not queued");
    if (cached_[b]) {
      ++cached;
      if (map_.find(hash_[b].lo) != b) fail("cached block " + std::to_string(b) + " not in map");
    }
  }
  if (used + queued != num_usable_blocks()) fail("used + free != usable blocks");
  if (static_cast<size_t>(cached) != map_.size()) fail("map size disagrees with cached blocks");
}

}  // namespace servesim
