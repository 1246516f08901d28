// BlockHasher: the chained hashes of a token sequence described as runs of (source, id,
// first position, length) — a prompt as the agent layer knows it, without materialising its
// token ids — cut into kTraceBlockTokens-token blocks. A block's hash covers its pieces and
// the hash of the block before it (as vLLM's block hashes do), so equal hashes mean equal
// tokens up to the block's end. Contiguous pieces of one (source, id) within a block are
// merged first, so the same tokens hash the same however the runs split them. A partial last
// block has no hash. Value type; thread-safety: none.
#pragma once

#include <cstdint>
#include <vector>

namespace servesim {

struct BlockHashValue {
  uint64_t lo = 0;
  uint64_t hi = 0;
};

class BlockHasher {
 public:
  void add(uint64_t source, uint64_t id, uint64_t start, int tokens);
  const std::vector<BlockHashValue>& hashes() const { return hashes_; }

 private:
  void absorb_pending();

  std::vector<BlockHashValue> hashes_;
  BlockHashValue state_;  // the block being filled, seeded with its parent's hash
  int filled_ = 0;        // tokens in the block being filled
  bool has_pending_ = false;
  uint64_t pending_source_ = 0;
  uint64_t pending_id_ = 0;
  uint64_t pending_start_ = 0;
  int pending_tokens_ = 0;
};

}  // namespace servesim
