// Fingerprint: a 64-bit hash of a run's event trace, folded event by event, so golden tests
// can pin a scenario's behaviour and two runs can be compared by one number.
//
// What is folded: the IEEE-754 bits of each executed event's time, its kind, target and
// payload — not seq, so equivalent traces scheduled through different insertion histories
// still match when they execute the same events at the same times.
// The mix is servesim's own (splitmix64's finaliser), identical on every platform.
// Thread-safety: none; a value type.
#pragma once

#include <cstdint>
#include <string>

#include "sim/core/event_queue.h"

namespace servesim {

class Fingerprint {
 public:
  void add(const Event& event);
  // Folds one extra 64-bit value (e.g. a request outcome a test wants pinned).
  void add_value(uint64_t value);

  uint64_t value() const { return hash_; }
  uint64_t events() const { return events_; }
  // 16 lowercase hex digits.
  std::string hex() const;

 private:
  uint64_t hash_ = 0x5e7e5133f1d9e3b7ULL;  // arbitrary non-zero start
  uint64_t events_ = 0;
};

}  // namespace servesim
