#include "sim/core/rng.h"

#include <cmath>

namespace servesim {

Rng::Rng(uint64_t seed) : seed_(seed), bits_(seed) {}

Rng Rng::fork(uint64_t stream) const {
  // Two splitmix rounds over (seed, stream) decorrelate neighbouring streams and seeds.
  uint64_t state = seed_ ^ 0x6a09e667f3bcc909ULL;
  const uint64_t a = splitmix64_next(state);
  state = a ^ (stream * 0xd1342543de82ef95ULL + 0x3c6ef372fe94f82bULL);
  return Rng(splitmix64_next(state));
}

double Rng::uniform() {
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

int64_t Rng::uniform_int(int64_t lo, int64_t hi) {
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  if (span == 0) return static_cast<int64_t>(next_u64());  // the full 64-bit range
  // Rejection of the short top slice removes modulo bias.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % span;
  uint64_t x;
  do {
    x = next_u64();
  } while (x >= limit);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + x % span);
}

double Rng::exponential(double rate) {
  // 1 - uniform() lies in (0, 1], so the log is finite.
  return -std::log(1.0 - uniform()) / rate;
}

double Rng::normal() {
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return spare_normal_;
  }
  double u, v, s;
  do {
    u = 2.0 * uniform() - 1.0;
    v = 2.0 * uniform() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double factor = std::sqrt(-2.0 * std::log(s) / s);
  spare_normal_ = v * factor;
  has_spare_normal_ = true;
  return u * factor;
}

double Rng::lognormal(double mu, double sigma) {
  return std::exp(mu + sigma * normal());
}

double Rng::gamma(double shape, double scale) {
  if (shape < 1.0) {
    // Boost to shape + 1 and scale back by U^(1/shape) (Marsaglia–Tsang, section 6).
    const double u = 1.0 - uniform();
    return gamma(shape + 1.0, scale) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = 1.0 - uniform();
    const double x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2) return d * v * scale;
    if (std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v))) return d * v * scale;
  }
}

}  // namespace servesim
