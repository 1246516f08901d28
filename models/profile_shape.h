// ProfileShape: one batch shape as calibration measures it — the sequences of one step, each
// with the tokens it computes, the tokens already in its KV cache and whether it is a prefill.
// The profiler's grid, its run directory and a profile's reference steps all name shapes so.
//
// Plain values; thread-compatible.
#pragma once

#include <vector>

namespace servesim {

struct ShapeSequence {
  int new_tokens = 0;  // computed this step
  int context = 0;     // already in the KV cache
  bool prefill = false;

  bool operator==(const ShapeSequence&) const = default;
};

using ProfileShape = std::vector<ShapeSequence>;

}  // namespace servesim
