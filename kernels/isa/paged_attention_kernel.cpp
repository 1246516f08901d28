// Compiled once per instruction-set level; see kernels/isa_kernels.h.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/isa_kernels.h"

namespace servesim::SERVESIM_ISA_NS {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Strided = Eigen::OuterStride<>;

}  // namespace

void paged_attention(const float* q, int64_t q_row_stride, const PagedKVCache& cache, int layer,
                     std::span<const AttentionSequence> sequences, int num_heads, float scale,
                     float* out, ThreadPool& pool) {
  if (sequences.empty()) return;
  const int head_dim = cache.head_dim();
  const int kv_heads = cache.num_kv_heads();
  const int group = num_heads / kv_heads;  // query heads per KV head
  const int block_size = cache.block_size();
  const int64_t token_stride = cache.token_stride();
  const float* keys = cache.keys(layer);
  const float* values = cache.values(layer);
  const AttentionSequence& last = sequences.back();
  const int64_t first_row = sequences.front().query_start;
  const int64_t num_rows = last.query_start + last.num_queries - first_row;
  const int64_t out_stride = static_cast<int64_t>(num_heads) * head_dim;

  pool.parallel_for(num_rows * kv_heads, [&](int64_t begin, int64_t end) {
    // Per-thread scratch, allocated once per range rather than once per block.
    RowMatrix scores(group, block_size);  // (group, block_size)
    RowMatrix acc(group, head_dim);       // (group, head_dim): unnormalised output
    Eigen::VectorXf row_max(group);       // running max of each query head's scores
    Eigen::VectorXf row_sum(group);       // running sum of exp(score - max)
    for (int64_t item = begin; item < end; ++item) {
      const int64_t row = first_row + item / kv_heads;
      const int g = static_cast<int>(item % kv_heads);
      // The sequence whose rows contain `row`: the last one starting at or before it.
      const auto it =
          std::upper_bound(sequences.begin(), sequences.end(), row,
                           [](int64_t r, const AttentionSequence& s) { return r < s.query_start; });
      const AttentionSequence& seq = *(it - 1);
      const int64_t pos = seq.context_len - seq.num_queries + (row - seq.query_start);
      const int64_t num_keys = pos + 1;

      Eigen::Map<const RowMatrix> qg(
          q + row * q_row_stride + static_cast<int64_t>(g) * group * head_dim, group, head_dim);
      acc.setZero();
      row_max.setConstant(-std::numeric_limits<float>::infinity());
      row_sum.setZero();
      for (int64_t first = 0; first < num_keys; first += block_size) {
        const int n = static_cast<int>(std::min<int64_t>(block_size, num_keys - first));
        const int64_t base =
            static_cast<int64_t>(seq.block_table[static_cast<size_t>(first / block_size)]) *
                block_size * token_stride +
            static_cast<int64_t>(g) * head_dim;
        Eigen::Map<const RowMatrix, 0, Strided> kb(keys + base, n, head_dim, Strided(token_stride));
        Eigen::Map<const RowMatrix, 0, Strided> vb(values + base, n, head_dim,
                                                   Strided(token_stride));
        auto s = scores.leftCols(n);
        s.noalias() = (qg * scale).lazyProduct(kb.transpose());
        for (int h = 0; h < group; ++h) {
          const float m_new = std::max(row_max[h], s.row(h).maxCoeff());
          const float correction = std::exp(row_max[h] - m_new);  // 0 on the first block
          s.row(h) = (s.row(h).array() - m_new).exp().matrix();
          row_sum[h] = row_sum[h] * correction + s.row(h).sum();
          acc.row(h) *= correction;
          row_max[h] = m_new;
        }
        acc.noalias() += s.lazyProduct(vb);
      }
      Eigen::Map<RowMatrix> og(out + row * out_stride + static_cast<int64_t>(g) * group * head_dim,
                               group, head_dim);
      og = row_sum.cwiseInverse().asDiagonal() * acc;
    }
  });
}

}  // namespace servesim::SERVESIM_ISA_NS
