#include "sim/core/fingerprint.h"

#include <bit>
#include <cstdio>

#include "base/mix64.h"

namespace servesim {

void Fingerprint::add_value(uint64_t value) {
  hash_ = mix64(hash_ ^ mix64(value + kGoldenGamma));
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
