// rms_norm: y = x / sqrt(mean(x^2) + eps) * weight, row by row (Llama's RMSNorm), with the
// mean accumulated in fp32 as Hugging Face computes it. Stateless; thread-safe.
#pragma once

#include <cstdint>

namespace servesim {

// x, y: (rows, dim) row-major, may alias; weight: (dim).
void rms_norm(const float* x, const float* weight, float* y, int64_t rows, int64_t dim, float eps);

}  // namespace servesim
