#include "kernels/paged_attention.h"

#include "kernels/isa_kernels.h"

namespace servesim {

void paged_attention(const float* q, int64_t q_row_stride, const PagedKVCache& cache, int layer,
                     std::span<const AttentionSequence> sequences, int num_heads, float scale,
                     float* out, ThreadPool& pool) {
  active_isa_kernels().paged_attention(q, q_row_stride, cache, layer, sequences, num_heads, scale,
                                       out, pool);
}

}  // namespace servesim
