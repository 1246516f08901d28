#include <cuda_bf16.h>

#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/paged_kv_cache.h"

namespace servesim::cuda {
namespace {

__global__ void kv_write_kernel(__nv_bfloat16* keys, __nv_bfloat16* values, const float* k,
                                const float* v, int64_t row_stride, const int64_t* slots,
                                int64_t num_tokens, int64_t token_stride) {
  const int64_t total = num_tokens * token_stride;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t token = i / token_stride, e = i % token_stride;
    const int64_t dst = slots[token] * token_stride + e;
    keys[dst] = __float2bfloat16(k[token * row_stride + e]);
    values[dst] = __float2bfloat16(v[token * row_stride + e]);
  }
}

}  // namespace

PagedKVCache::PagedKVCache(int num_layers, int64_t num_blocks, int block_size, int num_kv_heads,
                           int head_dim)
    : num_layers_(num_layers),
      num_blocks_(num_blocks),
      block_size_(block_size),
      num_kv_heads_(num_kv_heads),
      head_dim_(head_dim),
      layer_size_(num_blocks * block_size * num_kv_heads * head_dim),
      storage_(2 * num_layers * layer_size_ * static_cast<int64_t>(sizeof(Bf16))) {}

void PagedKVCache::write(int layer, const float* k, const float* v, int64_t row_stride,
                         const int64_t* slots, int64_t num_tokens, Stream stream) {
  const int64_t total = num_tokens * token_stride();
  if (total == 0) return;
  auto* keys = reinterpret_cast<__nv_bfloat16*>(storage_.data<Bf16>()) +
               2 * static_cast<int64_t>(layer) * layer_size_;
  constexpr int kThreads = 256;
  const auto blocks =
      static_cast<unsigned>(std::min<int64_t>((total + kThreads - 1) / kThreads, 65535));
  kv_write_kernel<<<blocks, kThreads, 0, stream>>>(keys, keys + layer_size_, k, v, row_stride,
                                                   slots, num_tokens, token_stride());
  check_launch("kv_write_kernel");
}

}  // namespace servesim::cuda
