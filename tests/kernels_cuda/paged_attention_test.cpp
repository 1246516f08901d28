// The CUDA paged attention and KV-cache write against the CPU paged_attention on a mixed batch
// (a chunk with earlier context, a prompt longer than one work item, a long decode that is
// split across warps, a decode at position 1, a chunk ending mid-block) over scattered blocks.
// The CPU cache holds the same bf16-rounded keys and values the GPU stores, so the difference
// is summation order, the fast exponential and the bf16 output: bound 1e-2 of the largest
// output (bf16 rounding alone is up to 3.9e-3 of a value).
#include "kernels/cuda/paged_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/cuda/paged_kv_cache.h"
#include "kernels/paged_attention.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels_cuda/cuda_test_util.h"

namespace servesim {
namespace {

using testing::from_device_bf16;
using testing::random_vector;
using testing::relative_error;
using testing::to_device;
using testing::to_device_raw;

constexpr double kBound = 1e-2;

struct TestSequence {
  int context_len;
  int num_queries;
  std::vector<int32_t> block_table;
};

void check_cuda_matches_cpu(int heads, int kv_heads, int head_dim) {
  SCOPED_TRACE(std::to_string(heads) + " heads, " + std::to_string(kv_heads) + " kv heads, " +
               "head_dim " + std::to_string(head_dim));
  const int block_size = 16, num_blocks = 64, layer = 1;
  std::vector<TestSequence> seqs = {
      {45, 6, {}}, {70, 70, {}}, {300, 1, {}}, {2, 1, {}}, {23, 3, {}}};
  std::vector<int32_t> free_blocks(num_blocks - 1);
  std::iota(free_blocks.begin(), free_blocks.end(), 1);
  SamplingRng rng(7);
  for (size_t i = free_blocks.size() - 1; i > 0; --i) {
    std::swap(free_blocks[i], free_blocks[size_t(rng.next() % (i + 1))]);
  }
  size_t next_block = 0;
  int64_t total_keys = 0, total_queries = 0;
  for (TestSequence& s : seqs) {
    for (int b = 0; b < (s.context_len + block_size - 1) / block_size; ++b) {
      s.block_table.push_back(free_blocks[next_block++]);
    }
    total_keys += s.context_len;
    total_queries += s.num_queries;
  }
  const int64_t kv_stride = int64_t(kv_heads) * head_dim;
  // Keys and values as rows of a fused projection (row stride 2 * kv_stride), as the runner
  // hands them to the cache; the CPU sees their bf16 roundings.
  const int64_t kv_row = 2 * kv_stride;
  const std::vector<float> kv = random_vector(size_t(total_keys * kv_row), 21, 2.0f);
  const std::vector<float> kv_rounded = cuda::round_to_bf16(kv);
  // Queries with a row stride wider than the heads, as in the fused q | k | v buffer.
  const int64_t q_stride = int64_t(heads) * head_dim + 2 * kv_stride;
  const std::vector<float> q = random_vector(size_t(total_queries * q_stride), 23, 2.0f);

  PagedKVCache cpu_cache(2, num_blocks, block_size, kv_heads, head_dim);
  cuda::PagedKVCache gpu_cache(2, num_blocks, block_size, kv_heads, head_dim);
  std::vector<int64_t> slots;
  std::vector<AttentionSequence> batch;
  int64_t row = 0;
  for (const TestSequence& s : seqs) {
    for (int p = 0; p < s.context_len; ++p) slots.push_back(cpu_cache.slot(s.block_table, p));
    batch.push_back({row, s.num_queries, s.context_len, s.block_table});
    row += s.num_queries;
  }
  cpu_cache.write(layer, kv_rounded.data(), kv_rounded.data() + kv_stride, kv_row, slots.data(),
                  total_keys);
  cuda::DeviceBuffer dkv = to_device(kv), dslots = to_device_raw(slots), dq = to_device(q);
  gpu_cache.write(layer, dkv.data<float>(), dkv.data<float>() + kv_stride, kv_row,
                  dslots.data<int64_t>(), total_keys, nullptr);

  const int64_t out_size = total_queries * heads * head_dim;
  std::vector<float> ref(size_t(out_size), 0.0f);
  ThreadPool pool(2);
  const float scale = 1.0f / std::sqrt(float(head_dim));
  paged_attention(q.data(), q_stride, cpu_cache, layer, batch, heads, scale, ref.data(), pool);

  for (bool split : {false, true}) {
    SCOPED_TRACE(split ? "split keys" : "whole keys");
    cuda::PagedAttention attention(heads, kv_heads, head_dim, /*num_sms=*/132);
    attention.plan(batch, split, nullptr);
    if (split) {
      EXPECT_GT(attention.current_plan().num_partials, 0);  // the 300-key decode was split
    }
    cuda::DeviceBuffer dout(out_size * 2);
    attention.run(dq.data<float>(), q_stride, gpu_cache, layer, scale, dout.data<cuda::Bf16>(),
                  nullptr);
    EXPECT_LT(relative_error(from_device_bf16(dout, size_t(out_size)), ref), kBound);
  }
}

TEST(CudaPagedAttention, MatchesCpuWithGqa) {
  SERVESIM_REQUIRE_CUDA_DEVICE();
  check_cuda_matches_cpu(8, 2, 128);  // Llama-3-8B's group of 4, its head_dim
  check_cuda_matches_cpu(8, 1, 64);   // multi-query: a group of 8, two rows per item
}

TEST(CudaPagedAttention, MatchesCpuWithoutGrouping) {
  SERVESIM_REQUIRE_CUDA_DEVICE();
  check_cuda_matches_cpu(4, 4, 32);
  check_cuda_matches_cpu(4, 2, 8);  // the tiny test model's shape
}

// The plan is host code: checked here without a device. Every (row, query head) vector of the
// batch is covered exactly once, by one item or by the splits of one merge whose key ranges
// tile [0, context_len).
TEST(CudaPagedAttentionPlan, CoversEveryVectorOnceAndSplitsOnlyLongDecodes) {
  const int heads = 32, kv_heads = 8, group = 4;
  const std::vector<int32_t> table(40, 1);
  const std::vector<AttentionSequence> batch = {
      {0, 70, 70, table}, {70, 1, 600, table}, {71, 1, 90, table}, {72, 1, 5, table}};
  for (bool split : {false, true}) {
    const cuda::AttentionPlan plan =
        cuda::AttentionPlan::build(batch, heads, kv_heads, /*num_sms=*/132, split);
    std::vector<int> seen(73 * group, 0);  // (row, head in group)
    for (const cuda::AttentionWorkItem& item : plan.items) {
      ASSERT_LE(item.vector_count, cuda::kMaxVectorsPerItem);
      EXPECT_LE(item.vector_count, plan.max_vectors);
      if (item.partial >= 0) continue;
      EXPECT_EQ(item.key_begin, 0);
      for (int v = item.vector_begin; v < item.vector_begin + item.vector_count; ++v) {
        ++seen[size_t((item.first_row + v / group) * group + v % group)];
      }
    }
    for (const cuda::AttentionMerge& merge : plan.merges) {
      int next_key = 0;
      for (int p = merge.first_partial; p < merge.first_partial + merge.num_partials; ++p) {
        const auto it =
            std::find_if(plan.items.begin(), plan.items.end(),
                         [&](const cuda::AttentionWorkItem& i) { return i.partial == p; });
        ASSERT_NE(it, plan.items.end());
        EXPECT_EQ(it->first_row, merge.row);
        EXPECT_EQ(it->key_begin, next_key);
        EXPECT_GT(it->key_end, it->key_begin);
        next_key = it->key_end;
      }
      const auto seq = std::find_if(batch.begin(), batch.end(), [&](const AttentionSequence& b) {
        return b.query_start == merge.row;
      });
      ASSERT_NE(seq, batch.end());
      EXPECT_EQ(next_key, seq->context_len);
      for (int v = 0; v < merge.vector_count; ++v) ++seen[size_t(merge.row * group + v)];
    }
    for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "vector " << i;
    // Only the 600-key decode holds enough keys to split (at least 2 x 64 keys).
    EXPECT_EQ(plan.merges.size(), split ? 1u : 0u);
    EXPECT_EQ(plan.tables.size(), 4 * table.size());
  }
}

TEST(CudaPagedAttention, RefusesHeadDimsItCannotHold) {
  EXPECT_THROW(cuda::PagedAttention(8, 2, 256, 1), std::invalid_argument);
  EXPECT_THROW(cuda::PagedAttention(8, 2, 12, 1), std::invalid_argument);
  EXPECT_THROW(cuda::PagedAttention(8, 3, 64, 1), std::invalid_argument);
}

}  // namespace
}  // namespace servesim
