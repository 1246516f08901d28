// Measurements of the two ceilings the CPU engine is held to: how fast this machine streams
// memory into the cores (decode reads every weight once per step), and how fast Eigen
// multiplies matrices through linear() (prefill is a batch of GEMMs). Each returns the
// median of `repeats` timed runs after one warm-up; the machine may be shared, so callers
// should report medians, not bests.
//
// Stateless apart from the pool; not thread-safe (uses the pool).
#pragma once

#include <cstdint>

#include "kernels/thread_pool.h"

namespace servesim {

// Bytes per second read by summing a `bytes`-sized fp32 buffer (choose it well beyond the
// last-level cache) split across the pool's threads.
double measure_read_bandwidth_Bps(ThreadPool& pool, int64_t bytes, int repeats);

// FLOP/s of linear() on an (m, k) x (n, k)^T product, counting 2*m*n*k per call.
double measure_gemm_flops(ThreadPool& pool, int64_t m, int64_t n, int64_t k, int repeats);

}  // namespace servesim
