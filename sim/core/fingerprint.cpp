#include "sim/core/fingerprint.h"

#include <bit>
#include <cstdio>

namespace servesim {

namespace {

// splitmix64's finaliser: a bijective 64-bit mix with full avalanche.
uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace

void Fingerprint::add_value(uint64_t value) {
  hash_ = mix64(hash_ ^ mix64(value + 0x9e3779b97f4a7c15ULL));
}

void Fingerprint::add(const Event& event) {
  add_value(std::bit_cast<uint64_t>(event.time_s));
  add_value((static_cast<uint64_t>(event.target) << 8) | static_cast<uint64_t>(event.kind));
  add_value(event.payload);
  ++events_;
}

std::string Fingerprint::hex() const {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(hash_));
  return buffer;
}

}  // namespace servesim
