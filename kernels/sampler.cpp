#include "kernels/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace servesim {
int32_t argmax(std::span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) {
  if (!(params.temperature >= 0.0f)) {
    throw std::invalid_argument("SamplingParams: temperature must be >= 0");
  }
  if (!(params.top_p > 0.0f && params.top_p <= 1.0f)) {
    throw std::invalid_argument("SamplingParams: top_p must be in (0, 1]");
  }
}

int32_t Sampler::sample(std::span<const float> logits) {
  if (params_.temperature == 0.0f) return argmax(logits);
  const size_t vocab = logits.size();
  probs_.resize(vocab);
  const float max_logit = *std::max_element(logits.begin(), logits.end());
  const float inv_t = 1.0f / params_.temperature;
  double total = 0.0;
  for (size_t i = 0; i < vocab; ++i) {
    probs_[i] = std::exp((logits[i] - max_logit) * inv_t);
    total += probs_[i];
  }
  const float inv_total = static_cast<float>(1.0 / total);
  for (float& p : probs_) p *= inv_total;

  order_.resize(vocab);
  std::iota(order_.begin(), order_.end(), 0);
  size_t kept = vocab;
  float kept_mass = 1.0f;
  if (params_.top_p < 1.0f) {
    // Ties keep the lower id first, so the nucleus does not depend on the sort's whims.
    std::sort(order_.begin(), order_.end(), [&](int32_t a, int32_t b) {
      return probs_[a] > probs_[b] || (probs_[a] == probs_[b] && a < b);
    });
    float cumulative = 0.0f;
    for (kept = 0; kept < vocab;) {
      cumulative += probs_[order_[kept]];
      ++kept;
      if (cumulative >= params_.top_p) break;
    }
    kept_mass = cumulative;
  }
  const float target = rng_.uniform() * kept_mass;
  float cumulative = 0.0f;
  for (size_t i = 0; i < kept; ++i) {
    cumulative += probs_[order_[i]];
    if (target < cumulative) return order_[i];
  }
  return order_[kept - 1];  // rounding left target at the very top of the mass
}

}  // namespace servesim
