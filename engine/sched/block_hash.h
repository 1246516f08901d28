// BlockHash: the 128-bit chained fingerprint of one full KV block, as vLLM's
// hash_block_tokens(parent_block_hash, block_token_ids, extra_keys) (kv_cache_utils.py).
//
// hash(block i) = H(hash(block i-1), tokens of block i); block 0 chains from
// root_block_hash(salt), so the salt separates whole prefixes. Two independent 64-bit lanes:
// `lo` keys the prefix-cache map, `hi` is compared on lookup together with the block's token
// ids, so a false hit needs a 128-bit collision of the whole prefix chain (about n^2 / 2^129
// for n distinct cached prefixes). Deterministic across runs and platforms; stateless.
#pragma once

#include <cstdint>

#include "base/mix64.h"

namespace servesim {

struct BlockHash {
  uint64_t lo = 0;
  uint64_t hi = 0;
  friend bool operator==(const BlockHash&, const BlockHash&) = default;
};

// The parent of block 0 for a given salt (scheduler hash_salt combined with the request's
// cache_salt). Distinct salts give distinct roots (each lane is a bijection of the salt).
inline constexpr BlockHash root_block_hash(uint64_t salt) {
  return BlockHash{mix64(salt ^ 0x6a09e667f3bcc908ULL), mix64(salt ^ 0xbb67ae8584caa73bULL)};
}

// Chained hash of `n` token ids following `parent`.
inline BlockHash hash_block_tokens(const BlockHash& parent, const int32_t* tokens, int n) {
  uint64_t a = parent.lo ^ 0x3c6ef372fe94f82bULL;
  uint64_t b = parent.hi ^ 0xa54ff53a5f1d36f1ULL;
  for (int i = 0; i < n; ++i) {
    const uint64_t t = static_cast<uint32_t>(tokens[i]);
    a = (a ^ t) * 0x9e3779b97f4a7c15ULL;
    a ^= a >> 29;
    b = (b + t) * 0xc2b2ae3d27d4eb4fULL;
    b ^= b >> 31;
  }
  return BlockHash{mix64(a ^ static_cast<uint64_t>(n)), mix64(b + 0x510e527fade682d1ULL)};
}

}  // namespace servesim
