// FlatIdMap: an open-addressing hash map from a 64-bit key to a non-negative 32-bit value
// (a block index or a sequence slot), with linear probing and backward-shift deletion (no
// tombstones). Grows by doubling when more than half full, so a map reserved for its peak
// size never allocates again. One key maps to one value. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/sched/block_hash.h"

namespace servesim {

class FlatIdMap {
 public:
  static constexpr int32_t kNotFound = -1;

  explicit FlatIdMap(size_t expected_size = 16) { reserve(expected_size); }

  // Makes room for `n` keys without rehashing.
  void reserve(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    if (cap > slots_.size()) rehash(cap);
  }

  size_t size() const { return size_; }

  int32_t find(uint64_t key) const {
    for (size_t i = mix64(key) & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.value == kNotFound) return kNotFound;
      if (s.key == key) return s.value;
    }
  }

  // Starts loading the slot where a probe for `key` begins, so that a later find() of many
  // keys overlaps their cache misses instead of taking them one after another.
  void prefetch(uint64_t key) const { __builtin_prefetch(&slots_[mix64(key) & mask_]); }

  // Inserts key -> value if the key is absent. Returns false (and changes nothing) if present.
  bool insert(uint64_t key, int32_t value) {
    if (2 * (size_ + 1) > slots_.size()) rehash(slots_.size() * 2);
    for (size_t i = mix64(key) & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.value == kNotFound) {
        s.key = key;
        s.value = value;
        ++size_;
        return true;
      }
      if (s.key == key) return false;
    }
  }

  // Removes `key` if it maps to `value` (or to anything when value == kNotFound).
  // Returns whether an entry was removed.
  bool erase(uint64_t key, int32_t value = kNotFound) {
    size_t i = mix64(key) & mask_;
    for (;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.value == kNotFound) return false;
      if (s.key == key) break;
    }
    if (value != kNotFound && slots_[i].value != value) return false;
    // Backward-shift deletion: pull later members of the probe run into the hole.
    size_t hole = i;
    for (size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      Slot& s = slots_[j];
      if (s.value == kNotFound) break;
      const size_t home = mix64(s.key) & mask_;
      // Move s into the hole if its home is not cyclically in (hole, j].
      const bool home_in_range =
          hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (!home_in_range) {
        slots_[hole] = s;
        hole = j;
      }
    }
    slots_[hole].value = kNotFound;
    --size_;
    return true;
  }

  void clear() {
    for (Slot& s : slots_) s.value = kNotFound;
    size_ = 0;
  }

 private:
  struct Slot {
    uint64_t key = 0;
    int32_t value = kNotFound;
  };

  void rehash(size_t cap) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    size_ = 0;
    for (const Slot& s : old) {
      if (s.value != kNotFound) insert(s.key, s.value);
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace servesim
