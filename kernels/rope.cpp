#include "kernels/rope.h"

#include <cmath>
#include <stdexcept>

namespace servesim {

RopeTable::RopeTable(int head_dim, int max_positions, double theta)
    : head_dim_(head_dim), max_positions_(max_positions) {
  if (head_dim < 2 || head_dim % 2 != 0 || max_positions < 1 || !(theta > 0)) {
    throw std::invalid_argument("RopeTable: head_dim must be even, positions and theta positive");
  }
  const int half = head_dim / 2;
  cos_.resize(static_cast<size_t>(max_positions) * half);
  sin_.resize(cos_.size());
  for (int i = 0; i < half; ++i) {
    // Computed in double as Hugging Face builds inv_freq, then rounded once.
    const double inv_freq = std::pow(theta, -2.0 * i / head_dim);
    for (int p = 0; p < max_positions; ++p) {
      const double angle = p * inv_freq;
      cos_[static_cast<size_t>(p) * half + i] = static_cast<float>(std::cos(angle));
      sin_[static_cast<size_t>(p) * half + i] = static_cast<float>(std::sin(angle));
    }
  }
}

void RopeTable::apply(float* x, int64_t num_tokens, int64_t row_stride, int num_heads,
                      const int32_t* positions) const {
  const int half = head_dim_ / 2;
  for (int64_t t = 0; t < num_tokens; ++t) {
    const float* c = cos_.data() + static_cast<size_t>(positions[t]) * half;
    const float* s = sin_.data() + static_cast<size_t>(positions[t]) * half;
    for (int h = 0; h < num_heads; ++h) {
      float* v = x + t * row_stride + static_cast<int64_t>(h) * head_dim_;
      for (int i = 0; i < half; ++i) {
        const float a = v[i];
        const float b = v[i + half];
        v[i] = a * c[i] - b * s[i];
        v[i + half] = b * c[i] + a * s[i];
      }
    }
  }
}

}  // namespace servesim
