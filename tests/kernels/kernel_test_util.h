// Helpers shared by the kernel tests: seeded random buffers and error measures.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/sampler.h"

namespace servesim::testing {

inline std::vector<float> random_vector(size_t n, uint64_t seed, float scale = 1.0f) {
  SamplingRng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = (2.0f * rng.uniform() - 1.0f) * scale;
  return v;
}

// max |a - b| / max(max |b|, tiny): the error relative to the reference's magnitude.
inline double max_relative_error(const std::vector<float>& a, const std::vector<double>& b) {
  double worst = 0, mag = 1e-30;
  for (size_t i = 0; i < b.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
    mag = std::max(mag, std::abs(b[i]));
  }
  return worst / mag;
}

}  // namespace servesim::testing
