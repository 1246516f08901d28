// linear: y = x W^T (+ b), the projection every transformer layer is made of, in fp32 with
// Eigen's GEMM. The output features are split across the pool's threads, each running Eigen
// on its slice of W, so one code path serves GEMV (decode, memory bound) and GEMM (prefill,
// compute bound). Stateless; thread-safe for disjoint outputs.
#pragma once

#include <cstdint>

#include "kernels/thread_pool.h"

namespace servesim {

// x: (m, k) row-major; w: (n, k) row-major, as PyTorch stores nn.Linear weights;
// bias: (n) or nullptr; y: (m, n) row-major, overwritten. REQUIRES: y does not alias x or w.
void linear(const float* x, const float* w, const float* bias, float* y, int64_t m, int64_t n,
            int64_t k, ThreadPool& pool);

}  // namespace servesim
