// Rotary position embedding, NeoX / Hugging Face Llama style ("rotate_half"): dimension i of
// a head pairs with i + head_dim/2 and turns by position * theta^(-2i/head_dim).
//
// RopeTable holds the cos/sin of every (position, pair) once, so the per-token work is a
// multiply-add. Immutable after construction; thread-safe for concurrent reads.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace servesim {

class RopeTable {
 public:
  // REQUIRES: head_dim even, max_positions >= 1, theta > 0.
  RopeTable(int head_dim, int max_positions, double theta);

  int head_dim() const { return head_dim_; }
  int max_positions() const { return max_positions_; }
  // (max_positions, head_dim / 2): what the CUDA backend uploads, so both backends rotate by
  // identical angles.
  std::span<const float> cos_table() const { return cos_; }
  std::span<const float> sin_table() const { return sin_; }

  // Rotates, in place, `num_heads` heads of `num_tokens` rows: x is (num_tokens, row_stride)
  // with head h of row t at x + t * row_stride + h * head_dim. positions: (num_tokens).
  // REQUIRES: every position < max_positions().
  void apply(float* x, int64_t num_tokens, int64_t row_stride, int num_heads,
             const int32_t* positions) const;

 private:
  int head_dim_;
  int max_positions_;
  std::vector<float> cos_;  // (max_positions, head_dim / 2)
  std::vector<float> sin_;  // (max_positions, head_dim / 2)
};

}  // namespace servesim
