// paged_attention: causal self-attention of a flattened batch that mixes prefill chunks and
// decodes, reading every key and value from the paged cache (the batch's own keys and values
// are written there first, as vLLM does). Online softmax over the cache blocks, so no score
// matrix is materialised; grouped-query attention shares each KV head among
// num_heads / num_kv_heads query heads.
//
// Work is split over (query row, KV head) pairs across the pool. Stateless; thread-safe for
// disjoint outputs.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/paged_kv_cache.h"
#include "kernels/thread_pool.h"

namespace servesim {

// One sequence of the flattened batch.
struct AttentionSequence {
  int64_t query_start = 0;  // first row of this sequence in q and out
  int num_queries = 0;      // tokens computed this step (a prefill chunk, or 1 for a decode)
  // Tokens in the cache once this step's keys are written: context before the step plus
  // num_queries. Query i sits at position context_len - num_queries + i and sees keys
  // [0, that position].
  int context_len = 0;
  std::span<const int32_t> block_table;  // covers context_len tokens
};

// q: (num_rows, q_row_stride) with head h of a row at offset h * head_dim; out: (num_rows,
// num_heads * head_dim). `sequences` are ordered by query_start and tile
// the rows from sequences.front().query_start on; other rows of out are left alone.
// scale: usually 1 / sqrt(head_dim). REQUIRES: num_heads % cache.num_kv_heads() == 0.
void paged_attention(const float* q, int64_t q_row_stride, const PagedKVCache& cache, int layer,
                     std::span<const AttentionSequence> sequences, int num_heads, float scale,
                     float* out, ThreadPool& pool);

}  // namespace servesim
