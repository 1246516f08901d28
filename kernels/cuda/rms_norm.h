// rms_norm (CUDA): y = x / sqrt(mean(x^2) + eps) * weight per row, reading the fp32 residual
// stream and writing the bf16 input of the next GEMM; the CUDA counterpart of
// kernels/rms_norm.h. One thread block per row. Stateless; thread-safe.
#pragma once

#include <cstdint>

#include "kernels/cuda/cuda_types.h"

namespace servesim::cuda {

// x: (any rows, dim) fp32; weight: (dim) fp32; y: (rows, dim) bf16. gather: (rows) device array,
// the row of x that output row i normalises (the LM head's sampled rows), or nullptr for row i.
void rms_norm(const float* x, const float* weight, Bf16* y, int64_t rows, int64_t dim, float eps,
              const int64_t* gather, Stream stream);

}  // namespace servesim::cuda
