// ReplicaSummary: what one replica (simulated, or the real-time engine) did over a run, from
// its scheduler's statistics and the step times it took; summary.json's "replicas" entries.
// Plain data.
#pragma once

#include <cstdint>

#include "models/cost_model.h"

namespace servesim {

struct ReplicaSummary {
  int64_t steps = 0;
  double busy_s = 0;  // seconds inside steps (simulated, or wall clock on the engine)
  int64_t preemptions = 0;
  double prefix_cache_hit_rate = 0;  // of prompt tokens looked up at admission
  int64_t evicted_blocks = 0;
  int64_t kv_blocks_used_at_end = 0;  // still referenced when the run ended: 0 unless stopped
  StepTime op_totals;                 // seconds per op over the run
};

}  // namespace servesim
