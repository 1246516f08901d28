#include "kernels/paged_kv_cache.h"

#include <cstring>
#include <stdexcept>

namespace servesim {

PagedKVCache::PagedKVCache(int num_layers, int64_t num_blocks, int block_size, int num_kv_heads,
                           int head_dim)
    : num_layers_(num_layers),
      num_blocks_(num_blocks),
      block_size_(block_size),
      num_kv_heads_(num_kv_heads),
      head_dim_(head_dim),
      layer_size_(num_blocks * block_size * num_kv_heads * head_dim) {
  if (num_layers < 1 || num_blocks < 1 || block_size < 1 || num_kv_heads < 1 || head_dim < 1) {
    throw std::invalid_argument("PagedKVCache: every dimension must be >= 1");
  }
  data_.assign(static_cast<size_t>(2 * num_layers * layer_size_), 0.0f);
}

void PagedKVCache::write(int layer, const float* k, const float* v, int64_t row_stride,
                         const int64_t* slots, int64_t num_tokens) {
  const int64_t stride = token_stride();
  const size_t bytes = static_cast<size_t>(stride) * sizeof(float);
  float* kc = keys(layer);
  float* vc = values(layer);
  for (int64_t t = 0; t < num_tokens; ++t) {
    std::memcpy(kc + slots[t] * stride, k + t * row_stride, bytes);
    std::memcpy(vc + slots[t] * stride, v + t * row_stride, bytes);
  }
}

}  // namespace servesim
