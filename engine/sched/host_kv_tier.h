// HostKvTier: the second KV tier in host memory that vLLM's OffloadingConnector keeps with its
// native CPU backend (vLLM 0.11-0.14, vllm/v1/kv_offload, LRU policy): a fixed number of host
// blocks, each holding one GPU block's KV under that block's hash. The scheduler side only:
// which hashes are here, which are being written, which a load is reading; the bytes move in
// whoever runs the steps (the simulator prices them on the replica's PCIe link).
//
// A block is free, pending (its store is in flight: not loadable, not evictable), or ready.
// Ready blocks that no load pins sit in an LRU list; storing into a full tier evicts from its
// head, a lookup hit moves a block to its tail. Stores are all or nothing, as vLLM's
// prepare_store: when the tier cannot make room for every new block, nothing is stored.
//
// Invariants (check_invariants()): every used block is in the hash map exactly once; the LRU
// list holds exactly the ready, unpinned blocks; free + used == num_blocks(). O(1) per block.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/sched/block_hash.h"
#include "engine/sched/flat_id_map.h"

namespace servesim {

class HostKvTier {
 public:
  // num_blocks 0 makes a tier that holds nothing (offload off). REQUIRES: 0 <= num_blocks <= 2^30.
  explicit HostKvTier(int64_t num_blocks);

  bool enabled() const { return num_blocks_ > 0; }
  int32_t num_blocks() const { return num_blocks_; }
  int32_t num_used_blocks() const { return num_blocks_ - static_cast<int32_t>(free_.size()); }
  uint64_t num_evictions() const { return num_evictions_; }

  // How many leading `hashes` are ready here; those move to the LRU tail (most recent).
  int lookup(std::span<const BlockHash> hashes);
  // A load reads these (ready) blocks: they cannot be evicted until unpin().
  void pin(std::span<const BlockHash> hashes);
  void unpin(std::span<const BlockHash> hashes);

  // Enters the `hashes` not held yet as pending, evicting the least recently used ready
  // blocks for room, and appends them to `entered`; held ones move to the LRU tail. Returns
  // how many were entered, or -1 (nothing changed) when there is no room for all of them.
  int prepare_store(std::span<const BlockHash> hashes, std::vector<BlockHash>& entered);
  // Pending blocks whose store finished become ready (most recent). Hashes no longer pending
  // are ignored.
  void complete_store(std::span<const BlockHash> hashes);
  // Pending blocks whose KV will not be computed after all (the request was aborted with its
  // step in flight) are freed; others are left as they are.
  void cancel_store(std::span<const BlockHash> hashes);

  bool is_ready(const BlockHash& h) const;
  bool is_pending(const BlockHash& h) const;

  // Throws std::logic_error naming the first broken invariant. O(num_blocks).
  void check_invariants() const;

 private:
  enum class State : uint8_t { kFree, kPending, kReady };
  struct Node {
    BlockHash hash;
    int32_t prev = -1;  // LRU links; -1 when not in the list
    int32_t next = -1;
    int32_t pins = 0;
    State state = State::kFree;
  };

  int32_t find(const BlockHash& h) const;
  void lru_remove(int32_t n);
  void lru_push_back(int32_t n);
  bool in_lru(int32_t n) const { return nodes_[n].state == State::kReady && nodes_[n].pins == 0; }

  int32_t num_blocks_;
  std::vector<Node> nodes_;  // num_blocks_ nodes, then the LRU sentinel
  std::vector<int32_t> free_;
  int32_t lru_size_ = 0;
  uint64_t num_evictions_ = 0;
  FlatIdMap map_;  // hash.lo -> node
};

}  // namespace servesim
