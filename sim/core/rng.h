// Rng: servesim's deterministic random number generator — xoshiro256** seeded through
// splitmix64 — with its own samplers, because std::*_distribution output is
// implementation-defined and would make fingerprints differ between standard libraries.
//
// Reproducibility: the 64-bit stream, uniform() and uniform_int() are bit-identical on every
// platform. The real-valued samplers use only std::log, std::sqrt and std::pow; sqrt is
// exactly rounded by IEEE-754 and glibc's log/pow are correctly rounded in practice, so runs
// match bit for bit across machines with the same libm and differ at most in the last ulp
// elsewhere.
// Streams: fork(k) derives an independent generator from the seed (not the current state),
// so adding draws to one stream (say, lengths) never shifts another (say, arrivals).
// Thread-safety: none; give each thread its own fork.
#pragma once

#include <cstdint>

#include "base/xoshiro256.h"

namespace servesim {

class Rng {
 public:
  explicit Rng(uint64_t seed);

  uint64_t seed() const { return seed_; }
  Rng fork(uint64_t stream) const;

  uint64_t next_u64() { return bits_.next(); }
  // Uniform in [0, 1), 53 random bits.
  double uniform();
  // Uniform integer in [lo, hi], inclusive, without modulo bias. REQUIRES: lo <= hi.
  int64_t uniform_int(int64_t lo, int64_t hi);
  // Exponential with the given rate (mean 1/rate). REQUIRES: rate > 0.
  double exponential(double rate);
  // Standard normal (Marsaglia's polar method; keeps the spare of each pair).
  double normal();
  double normal(double mean, double std) { return mean + std * normal(); }
  // exp(N(mu, sigma^2)).
  double lognormal(double mu, double sigma);
  // Gamma with shape k > 0 and scale theta > 0 (Marsaglia–Tsang; mean k*theta).
  double gamma(double shape, double scale);

 private:
  uint64_t seed_;
  Xoshiro256 bits_;
  double spare_normal_ = 0.0;
  bool has_spare_normal_ = false;
};

}  // namespace servesim
