// ShapeBatch: one ProfileShape made concrete for a Runner — a SchedulerOutput whose sequences
// compute exactly the shape's tokens, over block tables of private KV blocks (1, 2, ...; block
// 0 is the null block) and deterministic token ids. The profiler measures the grid with it and
// calibrate validate's speed probe re-measures a profile's reference steps.
//
// Owns the block tables and token lists the SchedulerOutput and tokens() point into: not
// copyable or movable. Immutable after construction; thread-compatible.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/sched/scheduler.h"
#include "models/profile_shape.h"

namespace servesim {

class ShapeBatch {
 public:
  // REQUIRES: the runner's KV cache has at least blocks_needed(shape, block_size) + 1 blocks.
  ShapeBatch(const ProfileShape& shape, int block_size, int vocab);
  ShapeBatch(const ShapeBatch&) = delete;
  ShapeBatch& operator=(const ShapeBatch&) = delete;

  // KV blocks the shape's sequences occupy (context and new tokens), the null block apart.
  static int64_t blocks_needed(const ProfileShape& shape, int block_size);

  const SchedulerOutput& output() const { return output_; }
  std::span<const std::span<const int32_t>> tokens() const { return spans_; }

 private:
  std::vector<std::vector<int32_t>> tables_;
  std::vector<std::vector<int32_t>> tokens_;
  std::vector<std::span<const int32_t>> spans_;
  SchedulerOutput output_;
};

}  // namespace servesim
