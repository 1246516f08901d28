// mix64 and splitmix64_next: servesim's one 64-bit mixing function (splitmix64's finaliser, a
// bijection with full avalanche) and the splitmix64 step built on it. Every hash, seed
// derivation and fingerprint in servesim uses these, so they are identical on every platform
// and standard library (unlike std::hash). Pure functions; thread-safe.
#pragma once

#include <cstdint>

namespace servesim {

// The golden-ratio increment of splitmix64.
inline constexpr uint64_t kGoldenGamma = 0x9e3779b97f4a7c15ULL;

inline constexpr uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// Advances `state` by the golden gamma and returns its mix: splitmix64 (Steele, Lea and
// Flood), the generator used to seed xoshiro256**.
inline constexpr uint64_t splitmix64_next(uint64_t& state) {
  state += kGoldenGamma;
  return mix64(state);
}

}  // namespace servesim
