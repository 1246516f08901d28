// PagedAttention (CUDA): causal attention of a flattened batch of prefill chunks and decodes
// over the bf16 paged KV cache, with fp32 scores, online softmax and fp32 accumulation; the
// CUDA counterpart of kernels/paged_attention.h, taking the same AttentionSequence list.
//
// Work is cut into warp-sized items: up to 16 query vectors (row, query head) of one sequence
// that share a KV head (GQA: a KV head's group of query heads reads each key once), scored 32
// keys at a time (one key per lane), so a prefill chunk is processed as flash-style tiles of
// its rows. A decode has few vectors, so its keys are split across warps (split-K) when the
// batch alone would leave the GPU idle, and a second kernel merges the splits' partial
// softmax sums.
//
//   PagedAttention attn(num_heads, num_kv_heads, head_dim, num_sms);
//   attn.plan(sequences, /*split_keys=*/true, stream);        // once per step
//   for (layer ...) attn.run(q, q_stride, cache, layer, scale, out, stream);
//
// Ownership: owns the device copy of the plan and the split workspace. Thread-safety: none.
// Invariants: run() uses the last plan(); head_dim <= 128 and a multiple of 8.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/cuda/cuda_types.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/paged_kv_cache.h"
#include "kernels/paged_attention.h"

namespace servesim::cuda {

// One warp's work for one KV head (the grid's second dimension). Vector v of a sequence is
// query row first_row + v / group, query head kv_head * group + v % group.
struct AttentionWorkItem {
  int32_t first_row;     // row of the sequence's first query in q and out
  int32_t first_pos;     // position of that query in the sequence
  int32_t vector_begin;  // this item's vectors: [vector_begin, vector_begin + vector_count)
  int32_t vector_count;  // <= kMaxVectorsPerItem
  int32_t key_begin;     // keys (positions) of this split: [key_begin, key_end)
  int32_t key_end;
  int32_t block_table;  // offset of the sequence's block table in the plan's table array
  int32_t partial;      // -1: writes out; else the split's slot in the partial sums
};

// The splits of one decode row to combine: vectors [0, vector_count) of the row.
struct AttentionMerge {
  int32_t row;            // query row in q and out
  int32_t first_partial;  // splits are partial slots [first_partial, + num_partials)
  int32_t num_partials;
  int32_t vector_count;
};

inline constexpr int kMaxVectorsPerItem = 16;
inline constexpr int kKeysPerTile = 32;  // one key per lane

// The work of one attention call, as the host computes it: per sequence, items of up to
// kMaxVectorsPerItem vectors covering all its (row, query head) vectors once — or, for a
// sequence split over its keys, one item per key range plus one merge.
struct AttentionPlan {
  std::vector<AttentionWorkItem> items;
  std::vector<AttentionMerge> merges;
  std::vector<int32_t> tables;  // every planned sequence's block table, concatenated
  int max_vectors = 0;          // largest vector_count: picks the kernel instance
  int num_partials = 0;         // split slots the items write

  // Cuts `sequences` (as for servesim::paged_attention) into items for a device with
  // `num_sms` multiprocessors. split_keys: split the keys of sequences whose vectors fit one
  // item (decodes) when the batch alone would leave the device idle. Pure host code.
  static AttentionPlan build(std::span<const AttentionSequence> sequences, int num_heads,
                             int num_kv_heads, int num_sms, bool split_keys);
};

class PagedAttention {
 public:
  // Throws std::invalid_argument for a head_dim the kernel does not handle (> 128 or not a
  // multiple of 8) or num_heads not a multiple of num_kv_heads. num_sms: the device's
  // multiprocessors, to size the decode splits.
  PagedAttention(int num_heads, int num_kv_heads, int head_dim, int num_sms);

  // Builds the AttentionPlan of `sequences` (block tables are host spans) and uploads it on
  // `stream`. split_keys: as AttentionPlan::build. The spans may be released once plan()
  // returns.
  void plan(std::span<const AttentionSequence> sequences, bool split_keys, Stream stream);

  // q: (rows, q_row_stride) fp32 on the device, head h of a row at offset h * head_dim;
  // out: (rows, num_heads * head_dim) bf16; only the planned rows are written.
  // scale: usually 1 / sqrt(head_dim).
  void run(const float* q, int64_t q_row_stride, const PagedKVCache& cache, int layer, float scale,
           Bf16* out, Stream stream);

  const AttentionPlan& current_plan() const { return plan_; }

 private:
  int num_heads_;
  int num_kv_heads_;
  int head_dim_;
  int num_sms_;
  AttentionPlan plan_;
  DeviceBuffer items_device_;
  DeviceBuffer merges_device_;
  DeviceBuffer tables_device_;
  // Per (KV head, partial slot, vector): running max, sum of exponentials, and the
  // unnormalised output (head_dim floats).
  DeviceBuffer partial_max_;  // (num_kv_heads, num_partials, kMaxVectorsPerItem) fp32
  DeviceBuffer partial_sum_;  // (num_kv_heads, num_partials, kMaxVectorsPerItem) fp32
  DeviceBuffer partial_acc_;  // (num_kv_heads, num_partials, kMaxVectorsPerItem, head_dim) fp32
};

}  // namespace servesim::cuda
