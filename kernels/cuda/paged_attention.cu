#include <cuda_bf16.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/paged_attention.h"

namespace servesim::cuda {
namespace {

constexpr int kWarpsPerBlock = 4;
constexpr int kVectors = kMaxVectorsPerItem;
constexpr int kTile = kKeysPerTile;
constexpr unsigned kFullMask = 0xffffffffu;
// Fewest keys a decode split reads: below two tiles the merge costs more than it saves.
constexpr int kMinKeysPerSplit = 2 * kTile;
// Decode splits aim at this many resident warps per multiprocessor: enough loads in flight
// to stream the KV cache at full bandwidth.
constexpr int kTargetWarpsPerSm = 16;

__device__ float warp_max(float x) {
  for (int offset = 16; offset > 0; offset /= 2)
    x = fmaxf(x, __shfl_xor_sync(kFullMask, x, offset));
  return x;
}

__device__ float warp_sum(float x) {
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(kFullMask, x, offset);
  return x;
}

// Loads kN consecutive bf16 values as fp32 with one vector load. REQUIRES: p aligned to
// 2 * kN bytes.
template <int kN>
__device__ void load_bf16(const __nv_bfloat16* p, float* out) {
  if constexpr (kN == 8) {
    const uint4 raw = *reinterpret_cast<const uint4*>(p);
    const auto* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 f = __bfloat1622float2(h[i]);
      out[2 * i] = f.x;
      out[2 * i + 1] = f.y;
    }
  } else if constexpr (kN == 4) {
    const uint2 raw = *reinterpret_cast<const uint2*>(p);
    const auto* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const float2 f = __bfloat1622float2(h[i]);
      out[2 * i] = f.x;
      out[2 * i + 1] = f.y;
    }
  } else if constexpr (kN == 2) {
    const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(p));
    out[0] = f.x;
    out[1] = f.y;
  } else {
    out[0] = __bfloat162float(*p);
  }
}

struct KernelArgs {
  const float* q;
  int64_t q_row_stride;
  const __nv_bfloat16* keys;
  const __nv_bfloat16* values;
  int64_t token_stride;  // elements per cache slot: num_kv_heads * head_dim
  int block_size;
  int head_dim;
  int group;  // query heads per KV head
  float scale;
  const AttentionWorkItem* items;
  int num_items;
  const int32_t* tables;
  int num_partials;
  float* partial_max;
  float* partial_sum;
  float* partial_acc;
  __nv_bfloat16* out;
  int64_t out_row_stride;  // num_heads * head_dim
};

// One warp per work item. kVecs: query vectors held per warp (>= the plan's largest item);
// kDims: output dimensions per lane (head_dim <= 32 * kDims). Scores live in registers, the
// queries (pre-scaled) and the tile's probabilities in shared memory, keys and values are read
// from the cache through L1.
template <int kVecs, int kDims>
__global__ void __launch_bounds__(kWarpsPerBlock * 32) paged_attention_kernel(KernelArgs a) {
  extern __shared__ __align__(16) float smem[];  // float4 loads of the query tile
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int item_index = blockIdx.x * kWarpsPerBlock + warp;
  if (item_index >= a.num_items) return;
  const AttentionWorkItem item = a.items[item_index];
  const int kv_head = blockIdx.y;
  const int hd = a.head_dim;
  float* q_tile = smem + warp * (kVecs * hd + kVecs * kTile);  // (kVecs, head_dim)
  float* p_tile = q_tile + kVecs * hd;                         // (kVecs, kTile)

  for (int i = lane; i < kVecs * hd; i += 32) {
    const int v = i / hd, d = i % hd;
    float x = 0.0f;
    if (v < item.vector_count) {
      const int vec = item.vector_begin + v;
      const int64_t row = item.first_row + vec / a.group;
      const int head = kv_head * a.group + vec % a.group;
      x = a.q[row * a.q_row_stride + static_cast<int64_t>(head) * hd + d] * a.scale;
    }
    q_tile[i] = x;
  }
  __syncwarp();

  int pos[kVecs];  // position of each vector's query row; -1 for unused vectors (sees no key)
  float m[kVecs], l[kVecs], acc[kVecs][kDims];
#pragma unroll
  for (int v = 0; v < kVecs; ++v) {
    pos[v] = v < item.vector_count ? item.first_pos + (item.vector_begin + v) / a.group : -1;
    m[v] = -INFINITY;
    l[v] = 0.0f;
#pragma unroll
    for (int c = 0; c < kDims; ++c) acc[v][c] = 0.0f;
  }
  const int last_pos = item.first_pos + (item.vector_begin + item.vector_count - 1) / a.group;
  const int key_end = min(item.key_end, last_pos + 1);
  const int32_t* table = a.tables + item.block_table;
  const int64_t head_offset = static_cast<int64_t>(kv_head) * hd;
  const int my_dim = lane * kDims;  // first output dimension of this lane

  for (int tile = item.key_begin; tile < key_end; tile += kTile) {
    const int key = tile + lane;
    const bool valid = key < key_end;
    const int64_t slot =
        valid ? static_cast<int64_t>(table[key / a.block_size]) * a.block_size + key % a.block_size
              : 0;
    float s[kVecs];
#pragma unroll
    for (int v = 0; v < kVecs; ++v) s[v] = 0.0f;
    if (valid) {
      const __nv_bfloat16* k = a.keys + slot * a.token_stride + head_offset;
      for (int d0 = 0; d0 < hd; d0 += 8) {
        float kf[8];
        load_bf16<8>(k + d0, kf);
#pragma unroll
        for (int v = 0; v < kVecs; ++v) {
          const float4 q0 = *reinterpret_cast<const float4*>(q_tile + v * hd + d0);
          const float4 q1 = *reinterpret_cast<const float4*>(q_tile + v * hd + d0 + 4);
          s[v] += q0.x * kf[0] + q0.y * kf[1] + q0.z * kf[2] + q0.w * kf[3] + q1.x * kf[4] +
                  q1.y * kf[5] + q1.z * kf[6] + q1.w * kf[7];
        }
      }
    }
#pragma unroll
    for (int v = 0; v < kVecs; ++v) {
      if (!valid || key > pos[v]) s[v] = -INFINITY;  // causal mask and the tile's tail
      const float m_new = fmaxf(m[v], warp_max(s[v]));
      // A vector that has seen no key yet keeps m = -inf; exp(-inf - -inf) would be NaN.
      const float p = m_new == -INFINITY ? 0.0f : __expf(s[v] - m_new);
      const float correction = m_new == -INFINITY ? 1.0f : __expf(m[v] - m_new);
      l[v] = l[v] * correction + warp_sum(p);
      m[v] = m_new;
#pragma unroll
      for (int c = 0; c < kDims; ++c) acc[v][c] *= correction;
      p_tile[v * kTile + lane] = p;
    }
    __syncwarp();
    const int tile_keys = min(kTile, key_end - tile);
    for (int j = 0; j < tile_keys; ++j) {
      const int64_t key_slot = __shfl_sync(kFullMask, slot, j);
      if (my_dim < hd) {
        float vf[kDims];
        load_bf16<kDims>(a.values + key_slot * a.token_stride + head_offset + my_dim, vf);
#pragma unroll
        for (int v = 0; v < kVecs; ++v) {
          const float p = p_tile[v * kTile + j];
#pragma unroll
          for (int c = 0; c < kDims; ++c) acc[v][c] += p * vf[c];
        }
      }
    }
    __syncwarp();
  }

#pragma unroll
  for (int v = 0; v < kVecs; ++v) {
    if (v >= item.vector_count) break;
    const int vec = item.vector_begin + v;
    if (item.partial >= 0) {
      const int64_t slot =
          (static_cast<int64_t>(kv_head) * a.num_partials + item.partial) * kVectors + v;
      if (lane == 0) {
        a.partial_max[slot] = m[v];
        a.partial_sum[slot] = l[v];
      }
      if (my_dim < hd) {
#pragma unroll
        for (int c = 0; c < kDims; ++c) a.partial_acc[slot * hd + my_dim + c] = acc[v][c];
      }
    } else if (my_dim < hd) {
      const int64_t row = item.first_row + vec / a.group;
      const int head = kv_head * a.group + vec % a.group;
      const float inv = 1.0f / l[v];  // l > 0: key 0 is visible to every query
#pragma unroll
      for (int c = 0; c < kDims; ++c) {
        a.out[row * a.out_row_stride + static_cast<int64_t>(head) * hd + my_dim + c] =
            __float2bfloat16(acc[v][c] * inv);
      }
    }
  }
}

// One warp per (merge, KV head): out = sum_s acc_s e^(m_s - M) / sum_s l_s e^(m_s - M), M the
// largest split maximum (the first split always saw key 0, so M is finite).
__global__ void merge_kernel(const AttentionMerge* merges, int num_merges, int num_partials,
                             int head_dim, int group, const float* partial_max,
                             const float* partial_sum, const float* partial_acc, __nv_bfloat16* out,
                             int64_t out_row_stride) {
  const int index = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (index >= num_merges) return;
  const AttentionMerge mg = merges[index];
  const int kv_head = blockIdx.y;
  for (int v = 0; v < mg.vector_count; ++v) {
    auto slot = [&](int s) {
      return (static_cast<int64_t>(kv_head) * num_partials + mg.first_partial + s) * kVectors + v;
    };
    float max_all = -INFINITY;
    for (int s = 0; s < mg.num_partials; ++s) max_all = fmaxf(max_all, partial_max[slot(s)]);
    float total = 0.0f;
    for (int s = 0; s < mg.num_partials; ++s) {
      total += partial_sum[slot(s)] * __expf(partial_max[slot(s)] - max_all);
    }
    const int64_t row = mg.row + v / group;
    const int head = kv_head * group + v % group;
    for (int d = lane; d < head_dim; d += 32) {
      float sum = 0.0f;
      for (int s = 0; s < mg.num_partials; ++s) {
        sum += partial_acc[slot(s) * head_dim + d] * __expf(partial_max[slot(s)] - max_all);
      }
      out[row * out_row_stride + static_cast<int64_t>(head) * head_dim + d] =
          __float2bfloat16(sum / total);
    }
  }
}

template <int kVecs, int kDims>
void launch(const KernelArgs& args, int kv_heads, Stream stream) {
  const int bytes = kWarpsPerBlock * (kVecs * args.head_dim + kVecs * kTile) * sizeof(float);
  const dim3 grid((args.num_items + kWarpsPerBlock - 1) / kWarpsPerBlock, kv_heads);
  paged_attention_kernel<kVecs, kDims><<<grid, kWarpsPerBlock * 32, bytes, stream>>>(args);
  check_launch("paged_attention_kernel");
}

template <int kDims>
void launch_for_vectors(int max_vectors, const KernelArgs& args, int kv_heads, Stream stream) {
  if (max_vectors <= 1) return launch<1, kDims>(args, kv_heads, stream);
  if (max_vectors <= 2) return launch<2, kDims>(args, kv_heads, stream);
  if (max_vectors <= 4) return launch<4, kDims>(args, kv_heads, stream);
  if (max_vectors <= 8) return launch<8, kDims>(args, kv_heads, stream);
  launch<16, kDims>(args, kv_heads, stream);
}

template <typename T>
void upload_vector(const std::vector<T>& host, DeviceBuffer& device, Stream stream) {
  const auto bytes = static_cast<int64_t>(host.size() * sizeof(T));
  device.reserve(bytes);
  device.upload(host.data(), bytes, stream);
}

}  // namespace

PagedAttention::PagedAttention(int num_heads, int num_kv_heads, int head_dim, int num_sms)
    : num_heads_(num_heads),
      num_kv_heads_(num_kv_heads),
      head_dim_(head_dim),
      num_sms_(std::max(1, num_sms)) {
  if (head_dim > 128 || head_dim % 8 != 0) {
    throw std::invalid_argument("CUDA paged attention: head_dim " + std::to_string(head_dim) +
                                " is not supported (a multiple of 8, at most 128)");
  }
  if (num_kv_heads < 1 || num_heads % num_kv_heads != 0) {
    throw std::invalid_argument(
        "CUDA paged attention: num_heads must be a multiple of num_kv_heads");
  }
}

AttentionPlan AttentionPlan::build(std::span<const AttentionSequence> sequences, int num_heads,
                                   int num_kv_heads, int num_sms, bool split_keys) {
  AttentionPlan plan;
  const int group = num_heads / num_kv_heads;
  int64_t unsplit_items = 0;
  for (const AttentionSequence& s : sequences) {
    unsplit_items += (static_cast<int64_t>(s.num_queries) * group + kVectors - 1) / kVectors;
  }
  // Splits per decode: enough warps over all KV heads to fill the device, never under
  // kMinKeysPerSplit keys each.
  const int64_t target_warps = static_cast<int64_t>(kTargetWarpsPerSm) * std::max(1, num_sms);
  const int64_t wanted_splits =
      std::max<int64_t>(1, target_warps / std::max<int64_t>(1, unsplit_items * num_kv_heads));

  for (const AttentionSequence& s : sequences) {
    const auto table = static_cast<int32_t>(plan.tables.size());
    plan.tables.insert(plan.tables.end(), s.block_table.begin(), s.block_table.end());
    const int first_pos = s.context_len - s.num_queries;
    const auto first_row = static_cast<int32_t>(s.query_start);
    const int vectors = s.num_queries * group;
    if (split_keys && vectors <= kVectors && wanted_splits > 1) {
      const int keys = s.context_len;
      const int64_t splits = std::min<int64_t>(wanted_splits, std::max(1, keys / kMinKeysPerSplit));
      // Keys per split, rounded to whole tiles so every split but the last is full.
      const int per_split =
          static_cast<int>(((keys + splits - 1) / splits + kTile - 1) / kTile * kTile);
      const int num_splits = (keys + per_split - 1) / per_split;
      if (num_splits > 1) {
        plan.merges.push_back(AttentionMerge{first_row, plan.num_partials, num_splits, vectors});
        for (int i = 0; i < num_splits; ++i) {
          plan.items.push_back(AttentionWorkItem{first_row, first_pos, 0, vectors, i * per_split,
                                                 std::min(keys, (i + 1) * per_split), table,
                                                 plan.num_partials++});
        }
        plan.max_vectors = std::max(plan.max_vectors, vectors);
        continue;
      }
    }
    for (int begin = 0; begin < vectors; begin += kVectors) {
      const int count = std::min(kVectors, vectors - begin);
      plan.items.push_back(
          AttentionWorkItem{first_row, first_pos, begin, count, 0, s.context_len, table, -1});
      plan.max_vectors = std::max(plan.max_vectors, count);
    }
  }
  return plan;
}

void PagedAttention::plan(std::span<const AttentionSequence> sequences, bool split_keys,
                          Stream stream) {
  plan_ = AttentionPlan::build(sequences, num_heads_, num_kv_heads_, num_sms_, split_keys);
  upload_vector(plan_.items, items_device_, stream);
  upload_vector(plan_.merges, merges_device_, stream);
  upload_vector(plan_.tables, tables_device_, stream);
  if (plan_.num_partials > 0) {
    const int64_t slots = static_cast<int64_t>(num_kv_heads_) * plan_.num_partials * kVectors;
    partial_max_.reserve(slots * static_cast<int64_t>(sizeof(float)));
    partial_sum_.reserve(slots * static_cast<int64_t>(sizeof(float)));
    partial_acc_.reserve(slots * head_dim_ * static_cast<int64_t>(sizeof(float)));
  }
}

void PagedAttention::run(const float* q, int64_t q_row_stride, const PagedKVCache& cache, int layer,
                         float scale, Bf16* out, Stream stream) {
  if (plan_.items.empty()) return;
  const int group = num_heads_ / num_kv_heads_;
  KernelArgs args{q,
                  q_row_stride,
                  reinterpret_cast<const __nv_bfloat16*>(cache.keys(layer)),
                  reinterpret_cast<const __nv_bfloat16*>(cache.values(layer)),
                  cache.token_stride(),
                  cache.block_size(),
                  head_dim_,
                  group,
                  scale,
                  items_device_.data<AttentionWorkItem>(),
                  static_cast<int>(plan_.items.size()),
                  tables_device_.data<int32_t>(),
                  plan_.num_partials,
                  partial_max_.data<float>(),
                  partial_sum_.data<float>(),
                  partial_acc_.data<float>(),
                  reinterpret_cast<__nv_bfloat16*>(out),
                  static_cast<int64_t>(num_heads_) * head_dim_};
  if (head_dim_ <= 32) {
    launch_for_vectors<1>(plan_.max_vectors, args, num_kv_heads_, stream);
  } else if (head_dim_ <= 64) {
    launch_for_vectors<2>(plan_.max_vectors, args, num_kv_heads_, stream);
  } else {
    launch_for_vectors<4>(plan_.max_vectors, args, num_kv_heads_, stream);
  }
  if (plan_.merges.empty()) return;
  const auto num_merges = static_cast<int>(plan_.merges.size());
  const dim3 grid((num_merges + kWarpsPerBlock - 1) / kWarpsPerBlock, num_kv_heads_);
  merge_kernel<<<grid, kWarpsPerBlock * 32, 0, stream>>>(
      merges_device_.data<AttentionMerge>(), num_merges, plan_.num_partials, head_dim_, group,
      partial_max_.data<float>(), partial_sum_.data<float>(), partial_acc_.data<float>(), args.out,
      args.out_row_stride);
  check_launch("attention merge_kernel");
}

}  // namespace servesim::cuda
