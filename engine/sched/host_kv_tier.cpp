#include "engine/sched/host_kv_tier.h"

#include <stdexcept>
#include <string>

namespace servesim {

HostKvTier::HostKvTier(int64_t num_blocks)
    : num_blocks_(static_cast<int32_t>(num_blocks)),
      map_(static_cast<size_t>(num_blocks > 0 && num_blocks <= (int64_t{1} << 30) ? num_blocks
                                                                                  : 0)) {
  if (num_blocks < 0 || num_blocks > (int64_t{1} << 30)) {
    throw std::invalid_argument("HostKvTier: need 0 <= num_blocks <= 2^30");
  }
  nodes_.assign(static_cast<size_t>(num_blocks_) + 1, Node{});
  Node& sentinel = nodes_[num_blocks_];
  sentinel.prev = sentinel.next = num_blocks_;
  free_.reserve(static_cast<size_t>(num_blocks_));
  for (int32_t n = num_blocks_ - 1; n >= 0; --n) free_.push_back(n);
}

int32_t HostKvTier::find(const BlockHash& h) const {
  if (!enabled()) return -1;
  const int32_t n = map_.find(h.lo);
  return n >= 0 && nodes_[n].hash.hi == h.hi ? n : -1;
}

void HostKvTier::lru_remove(int32_t n) {
  Node& node = nodes_[n];
  nodes_[node.prev].next = node.next;
  nodes_[node.next].prev = node.prev;
  node.prev = node.next = -1;
  --lru_size_;
}

void HostKvTier::lru_push_back(int32_t n) {
  Node& sentinel = nodes_[num_blocks_];
  const int32_t last = sentinel.prev;
  nodes_[last].next = n;
  nodes_[n].prev = last;
  nodes_[n].next = num_blocks_;
  sentinel.prev = n;
  ++lru_size_;
}

int HostKvTier::lookup(std::span<const BlockHash> hashes) {
  int hits = 0;
  for (const BlockHash& h : hashes) {
    const int32_t n = find(h);
    if (n < 0 || nodes_[n].state != State::kReady) break;
    if (in_lru(n)) {
      lru_remove(n);
      lru_push_back(n);
    }
    ++hits;
  }
  return hits;
}

void HostKvTier::pin(std::span<const BlockHash> hashes) {
  for (const BlockHash& h : hashes) {
    const int32_t n = find(h);
    if (n < 0 || nodes_[n].state != State::kReady) {
      throw std::logic_error("HostKvTier::pin: block is not ready");
    }
    if (in_lru(n)) lru_remove(n);
    ++nodes_[n].pins;
  }
}

void HostKvTier::unpin(std::span<const BlockHash> hashes) {
  for (const BlockHash& h : hashes) {
    const int32_t n = find(h);
    if (n < 0 || nodes_[n].pins == 0) throw std::logic_error("HostKvTier::unpin: not pinned");
    if (--nodes_[n].pins == 0) lru_push_back(n);
  }
}

int HostKvTier::prepare_store(std::span<const BlockHash> hashes, std::vector<BlockHash>& entered) {
  if (!enabled()) return -1;
  int absent = 0;
  int held_evictable = 0;  // held blocks the evictions below must spare
  for (const BlockHash& h : hashes) {
    const int32_t n = find(h);
    if (n < 0) {
      ++absent;
    } else if (in_lru(n)) {
      ++held_evictable;
    }
  }
  if (absent > static_cast<int>(free_.size()) + lru_size_ - held_evictable) return -1;
  // Out of the list while the new blocks take room, back at its tail (most recent) after.
  for (const BlockHash& h : hashes) {
    const int32_t n = find(h);
    if (n >= 0 && in_lru(n)) lru_remove(n);
  }
  const size_t first_entered = entered.size();
  for (const BlockHash& h : hashes) {
    if (find(h) >= 0) continue;
    int32_t n;
    if (!free_.empty()) {
      n = free_.back();
      free_.pop_back();
    } else {
      n = nodes_[num_blocks_].next;  // the least recently used ready block
      lru_remove(n);
      map_.erase(nodes_[n].hash.lo, n);
      ++num_evictions_;
    }
    nodes_[n].hash = h;
    nodes_[n].state = State::kPending;
    map_.insert(h.lo, n);
    entered.push_back(h);
  }
  for (const BlockHash& h : hashes) {
    const int32_t n = find(h);
    // Held blocks, not the ones just entered (pending, outside the list until stored).
    if (nodes_[n].state == State::kReady && nodes_[n].pins == 0 && nodes_[n].prev < 0) {
      lru_push_back(n);
    }
  }
  return static_cast<int>(entered.size() - first_entered);
}

void HostKvTier::complete_store(std::span<const BlockHash> hashes) {
  for (const BlockHash& h : hashes) {
    const int32_t n = find(h);
    if (n < 0 || nodes_[n].state != State::kPending) continue;
    nodes_[n].state = State::kReady;
    lru_push_back(n);
  }
}

void HostKvTier::cancel_store(std::span<const BlockHash> hashes) {
  for (const BlockHash& h : hashes) {
    const int32_t n = find(h);
    if (n < 0 || nodes_[n].state != State::kPending) continue;
    map_.erase(h.lo, n);
    nodes_[n].state = State::kFree;
    free_.push_back(n);
  }
}

bool HostKvTier::is_ready(const BlockHash& h) const {
  const int32_t n = find(h);
  return n >= 0 && nodes_[n].state == State::kReady;
}

bool HostKvTier::is_pending(const BlockHash& h) const {
  const int32_t n = find(h);
  return n >= 0 && nodes_[n].state == State::kPending;
}

void HostKvTier::check_invariants() const {
  auto fail = [](const std::string& what) {
    throw std::logic_error("HostKvTier invariant broken: " + what);
  };
  std::vector<uint8_t> is_free(static_cast<size_t>(num_blocks_), 0);
  for (int32_t n : free_) {
    if (n < 0 || n >= num_blocks_ || is_free[n]) fail("bad or repeated free block");
    if (nodes_[n].state != State::kFree) fail("free block " + std::to_string(n) + " in use");
    is_free[n] = 1;
  }
  int32_t listed = 0;
  for (int32_t n = nodes_[num_blocks_].next, prev = num_blocks_; n != num_blocks_;
       prev = n, n = nodes_[n].next) {
    if (n < 0 || n >= num_blocks_) fail("bad block index in the LRU list");
    if (nodes_[n].prev != prev) fail("LRU links disagree at block " + std::to_string(n));
    if (!in_lru(n)) fail("block " + std::to_string(n) + " listed but pending or pinned");
    if (++listed > num_blocks_) fail("LRU list is cyclic");
  }
  if (listed != lru_size_) fail("lru_size_ disagrees with the LRU list");
  int32_t used = 0;
  int32_t evictable = 0;
  for (int32_t n = 0; n < num_blocks_; ++n) {
    const Node& node = nodes_[n];
    if (node.state == State::kFree) {
      if (!is_free[n]) fail("block " + std::to_string(n) + " neither used nor free");
      continue;
    }
    ++used;
    if (map_.find(node.hash.lo) != n) fail("used block " + std::to_string(n) + " not in map");
    if (node.state == State::kPending && node.pins > 0) fail("pending block pinned");
    evictable += in_lru(n) ? 1 : 0;
  }
  if (evictable != lru_size_) fail("ready unpinned blocks are not all in the LRU list");
  if (static_cast<size_t>(used) != map_.size()) fail("map size disagrees with used blocks");
  if (used + static_cast<int32_t>(free_.size()) != num_blocks_) fail("used + free != blocks");
}

}  // namespace servesim
