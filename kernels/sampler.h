// Sampler: picks the next token from a row of logits — greedy (temperature 0), or temperature
// sampling restricted to the top-p nucleus — with its own seeded generator (xoshiro256**,
// seeded through splitmix64), so a request's tokens depend only on its logits and its seed.
//
// One Sampler per request. Owns its generator and scratch buffers. Not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/sampling_params.h"
#include "base/xoshiro256.h"

namespace servesim {

// The sampler's draws: base/xoshiro256.h's stream, as floats.
class SamplingRng {
 public:
  explicit SamplingRng(uint64_t seed) : bits_(seed) {}
  uint64_t next() { return bits_.next(); }
  // Uniform in [0, 1) with 24 bits, the resolution of a float.
  float uniform() { return static_cast<float>(next() >> 40) * 0x1.0p-24f; }

 private:
  Xoshiro256 bits_;
};

class Sampler {
 public:
  // Throws std::invalid_argument when temperature < 0 or top_p outside (0, 1].
  explicit Sampler(const SamplingParams& params);

  const SamplingParams& params() const { return params_; }

  // logits: (vocab). Returns a token id in [0, vocab).
  int32_t sample(std::span<const float> logits);

 private:
  SamplingParams params_;
  SamplingRng rng_;
  std::vector<float> probs_;    // (vocab) scratch
  std::vector<int32_t> order_;  // (vocab) scratch: ids by decreasing probability
};

// Index of the largest logit, the lowest one among equals.
int32_t argmax(std::span<const float> logits);

}  // namespace servesim
