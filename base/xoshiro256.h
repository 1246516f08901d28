// Xoshiro256: the 64-bit stream of xoshiro256** (Blackman and Vigna), seeded through
// splitmix64: small, fast, and bit-identical on every platform, unlike <random>'s engines and
// distributions. The engine's token sampler and the simulator's Rng both draw from it.
// A plain value (copying it copies the stream position); not thread-safe.
#pragma once

#include <cstdint>

#include "base/mix64.h"

namespace servesim {

class Xoshiro256 {
 public:
  explicit constexpr Xoshiro256(uint64_t seed) {
    uint64_t state = seed;
    for (uint64_t& word : s_) word = splitmix64_next(state);
  }

  constexpr uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

 private:
  static constexpr uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  uint64_t s_[4] = {};
};

}  // namespace servesim
