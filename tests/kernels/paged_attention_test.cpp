#include "kernels/paged_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "kernels/isa_kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace servesim {
namespace {

using testing::max_relative_error;
using testing::random_vector;

// A sequence of the test batch: its full keys/values (dense), its block table, and how many
// of its tokens are queried this step.
struct TestSequence {
  int context_len;
  int num_queries;
  std::vector<int32_t> block_table;
};

// Dense causal attention in double over each sequence's whole key/value history.
std::vector<double> dense_attention(const std::vector<float>& q, const std::vector<float>& k_all,
                                    const std::vector<float>& v_all,
                                    const std::vector<TestSequence>& seqs,
                                    const std::vector<int64_t>& seq_key_start, int heads,
                                    int kv_heads, int head_dim) {
  const int group = heads / kv_heads;
  std::vector<double> out(q.size());
  int64_t row = 0;
  for (size_t s = 0; s < seqs.size(); ++s) {
    for (int i = 0; i < seqs[s].num_queries; ++i, ++row) {
      const int pos = seqs[s].context_len - seqs[s].num_queries + i;
      for (int h = 0; h < heads; ++h) {
        const int g = h / group;
        std::vector<double> w(size_t(pos + 1));
        double mx = -1e300;
        for (int j = 0; j <= pos; ++j) {
          double d = 0;
          for (int e = 0; e < head_dim; ++e) {
            d += double(q[size_t((row * heads + h) * head_dim + e)]) *
                 k_all[size_t(((seq_key_start[s] + j) * kv_heads + g) * head_dim + e)];
          }
          w[size_t(j)] = d / std::sqrt(double(head_dim));
          mx = std::max(mx, w[size_t(j)]);
        }
        double sum = 0;
        for (double& x : w) sum += (x = std::exp(x - mx));
        for (int e = 0; e < head_dim; ++e) {
          double acc = 0;
          for (int j = 0; j <= pos; ++j) {
            acc += w[size_t(j)] *
                   v_all[size_t(((seq_key_start[s] + j) * kv_heads + g) * head_dim + e)];
          }
          out[size_t((row * heads + h) * head_dim + e)] = acc / sum;
        }
      }
    }
  }
  return out;
}

void check_paged_matches_dense(int heads, int kv_heads, int threads,
                               PagedAttentionKernel* kernel = &paged_attention) {
  const int head_dim = 16, block_size = 4, num_blocks = 40;
  // A prefill chunk with earlier context, a whole prompt, a decode with a long context, a
  // decode at position 0's neighbour, and a chunk ending mid-block.
  std::vector<TestSequence> seqs = {{13, 6, {}}, {9, 9, {}}, {30, 1, {}}, {2, 1, {}}, {7, 3, {}}};
  // Scattered physical blocks, as the block pool hands them out; block 0 stays unused.
  std::vector<int32_t> free_blocks(num_blocks - 1);
  std::iota(free_blocks.begin(), free_blocks.end(), 1);
  SamplingRng rng(99);
  for (size_t i = free_blocks.size() - 1; i > 0; --i) {
    std::swap(free_blocks[i], free_blocks[size_t(rng.next() % (i + 1))]);
  }
  size_t next_block = 0;
  std::vector<int64_t> key_start;
  int64_t total_keys = 0, total_queries = 0;
  for (TestSequence& s : seqs) {
    for (int b = 0; b < (s.context_len + block_size - 1) / block_size; ++b) {
      s.block_table.push_back(free_blocks[next_block++]);
    }
    key_start.push_back(total_keys);
    total_keys += s.context_len;
    total_queries += s.num_queries;
  }
  const int64_t kv_stride = int64_t(kv_heads) * head_dim;
  const std::vector<float> k_all = random_vector(size_t(total_keys * kv_stride), 21, 2.0f);
  const std::vector<float> v_all = random_vector(size_t(total_keys * kv_stride), 22);
  const std::vector<float> q = random_vector(size_t(total_queries * heads * head_dim), 23, 2.0f);

  PagedKVCache cache(2, num_blocks, block_size, kv_heads, head_dim);
  std::vector<AttentionSequence> batch;
  int64_t row = 0;
  for (size_t s = 0; s < seqs.size(); ++s) {
    std::vector<int64_t> slots;
    for (int p = 0; p < seqs[s].context_len; ++p)
      slots.push_back(cache.slot(seqs[s].block_table, p));
    cache.write(1, k_all.data() + key_start[s] * kv_stride, v_all.data() + key_start[s] * kv_stride,
                kv_stride, slots.data(), int64_t(slots.size()));
    batch.push_back({row, seqs[s].num_queries, seqs[s].context_len, seqs[s].block_table});
    row += seqs[s].num_queries;
  }
  std::vector<float> out(q.size(), 0.0f);
  ThreadPool pool(threads);
  kernel(q.data(), int64_t(heads) * head_dim, cache, 1, batch, heads,
         1.0f / std::sqrt(float(head_dim)), out.data(), pool);
  const std::vector<double> ref =
      dense_attention(q, k_all, v_all, seqs, key_start, heads, kv_heads, head_dim);
  EXPECT_LT(max_relative_error(out, ref), 1e-5)
      << heads << " heads, " << kv_heads << " kv heads, " << threads << " threads";
  // Two calls over consecutive slices of the batch (as the runner splits prefills from
  // decodes) fill the same rows with the same values.
  std::vector<float> split(q.size(), 0.0f);
  const std::span<const AttentionSequence> all(batch);
  for (const std::span<const AttentionSequence> part : {all.first(2), all.subspan(2)}) {
    kernel(q.data(), int64_t(heads) * head_dim, cache, 1, part, heads,
           1.0f / std::sqrt(float(head_dim)), split.data(), pool);
  }
  EXPECT_EQ(split, out);
}

TEST(PagedAttention, MatchesDenseCausalAttentionOnAMixedBatch) {
  check_paged_matches_dense(4, 4, 1);
}

TEST(PagedAttention, GroupedQueryAttentionMatchesDense) {
  check_paged_matches_dense(6, 2, 1);
  check_paged_matches_dense(8, 1, 2);
}

TEST(PagedAttention, ThreadsDoNotChangeTheResult) {
  check_paged_matches_dense(4, 2, 3);
}

TEST(PagedAttention, EveryIsaCopyThisCpuRunsMatchesDense) {
  int ran = 0;
  for (const IsaKernels& copy : built_isa_kernels()) {
    if (!cpu_supports(copy.isa)) continue;
    SCOPED_TRACE(cpu_isa_name(copy.isa));
    ++ran;
    check_paged_matches_dense(6, 2, 2, copy.paged_attention);
  }
  EXPECT_GE(ran, 1);
}

TEST(PagedKVCache, SlotFollowsTheBlockTable) {
  PagedKVCache cache(1, 8, 16, 2, 4);
  const int32_t table[] = {5, 2};
  EXPECT_EQ(cache.slot(table, 0), 80);
  EXPECT_EQ(cache.slot(table, 17), 33);
  EXPECT_EQ(cache.bytes(), int64_t(2 * 8 * 16 * 2 * 4 * sizeof(float)));
}

}  // namespace
}  // namespace servesim
