// PagedKVCache: the keys and values of every layer in fixed-size blocks of tokens, addressed
// through a sequence's block table (logical block -> physical block) as the scheduler's
// KVCacheManager hands them out. Block 0 is the scheduler's reserved null block; it is
// allocated like any other and never written by a valid block table.
//
// Ownership: owns its storage (one allocation). Thread-safety: write() and reads of
// disjoint slots may run concurrently; otherwise one writer at a time.
// Invariants: a token at position p of a sequence lives in slot
// block_table[p / block_size] * block_size + p % block_size of every layer.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace servesim {

class PagedKVCache {
 public:
  // REQUIRES: every argument >= 1.
  PagedKVCache(int num_layers, int64_t num_blocks, int block_size, int num_kv_heads, int head_dim);

  int num_layers() const { return num_layers_; }
  int64_t num_blocks() const { return num_blocks_; }
  int block_size() const { return block_size_; }
  int num_kv_heads() const { return num_kv_heads_; }
  int head_dim() const { return head_dim_; }
  // Floats per token of one layer's keys (or values): num_kv_heads * head_dim.
  int64_t token_stride() const { return static_cast<int64_t>(num_kv_heads_) * head_dim_; }
  int64_t bytes() const { return static_cast<int64_t>(data_.size() * sizeof(float)); }

  // (num_blocks, block_size, num_kv_heads, head_dim) of one layer.
  float* keys(int layer) { return data_.data() + (2 * static_cast<int64_t>(layer)) * layer_size_; }
  float* values(int layer) { return keys(layer) + layer_size_; }
  const float* keys(int layer) const {
    return data_.data() + (2 * static_cast<int64_t>(layer)) * layer_size_;
  }
  const float* values(int layer) const { return keys(layer) + layer_size_; }

  // Slot of position `pos` of a sequence with this block table.
  int64_t slot(std::span<const int32_t> block_table, int64_t pos) const {
    return static_cast<int64_t>(block_table[static_cast<size_t>(pos / block_size_)]) * block_size_ +
           pos % block_size_;
  }

  // Stores the keys and values of `num_tokens` tokens of `layer`: row t of k and v (each
  // (num_tokens, row_stride), the first token_stride() floats used) goes to slots[t].
  // REQUIRES: every slot < num_blocks() * block_size().
  void write(int layer, const float* k, const float* v, int64_t row_stride, const int64_t* slots,
             int64_t num_tokens);

 private:
  int num_layers_;
  int64_t num_blocks_;
  int block_size_;
  int num_kv_heads_;
  int head_dim_;
  int64_t layer_size_;       // floats of one layer's keys: num_blocks * block_size * token_stride
  std::vector<float> data_;  // (num_layers, 2 [keys, values], num_blocks, block_size,
                             //  num_kv_heads, head_dim)
};

}  // namespace servesim
