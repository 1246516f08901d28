// PagedKVCache (CUDA): the keys and values of every layer in bf16 on the device, in the CPU
// PagedKVCache's layout and addressing (kernels/paged_kv_cache.h): per layer
// (num_blocks, block_size, num_kv_heads, head_dim), a token at position p of a sequence in
// slot block_table[p / block_size] * block_size + p % block_size. Block 0 is the scheduler's
// reserved null block.
//
// Ownership: owns one device allocation. Thread-safety: none; write() is ordered with the
// attention kernels by the stream it runs on.
#pragma once

#include <cstdint>

#include "kernels/cuda/cuda_types.h"
#include "kernels/cuda/device_buffer.h"

namespace servesim::cuda {

class PagedKVCache {
 public:
  // REQUIRES: every argument >= 1. Throws CudaError when the device is out of memory.
  PagedKVCache(int num_layers, int64_t num_blocks, int block_size, int num_kv_heads, int head_dim);

  int num_layers() const { return num_layers_; }
  int64_t num_blocks() const { return num_blocks_; }
  int block_size() const { return block_size_; }
  int num_kv_heads() const { return num_kv_heads_; }
  int head_dim() const { return head_dim_; }
  // Elements per token of one layer's keys (or values): num_kv_heads * head_dim.
  int64_t token_stride() const { return static_cast<int64_t>(num_kv_heads_) * head_dim_; }
  int64_t bytes() const { return storage_.bytes(); }

  // (num_blocks, block_size, num_kv_heads, head_dim) bf16 of one layer.
  const Bf16* keys(int layer) const {
    return storage_.data<Bf16>() + 2 * static_cast<int64_t>(layer) * layer_size_;
  }
  const Bf16* values(int layer) const { return keys(layer) + layer_size_; }

  // Stores `num_tokens` tokens of `layer`, rounding to bf16: row t of k and v (fp32 device
  // arrays (num_tokens, row_stride), the first token_stride() elements used) goes to slots[t]
  // (a device array). REQUIRES: every slot < num_blocks() * block_size().
  void write(int layer, const float* k, const float* v, int64_t row_stride, const int64_t* slots,
             int64_t num_tokens, Stream stream);

 private:
  int num_layers_;
  int64_t num_blocks_;
  int block_size_;
  int num_kv_heads_;
  int head_dim_;
  int64_t layer_size_;    // elements of one layer's keys: num_blocks * block_size * token_stride
  DeviceBuffer storage_;  // (num_layers, 2 [keys, values], num_blocks, block_size, num_kv_heads,
                          //  head_dim) bf16
};

}  // namespace servesim::cuda
